package dev.sluice.redis;

import java.nio.charset.StandardCharsets;

/**
 * Redis key names: {@code <prefix>{<rule>|<key>}}, e.g. {@code sluice:{auth.createToken|user:42}}.
 *
 * <p>The braces are a Cluster hash tag around rule and key, so all windows of a (rule, key) —
 * one key anyway — and nothing else decide its slot. Redis ends a hash tag at the first
 * {@code }} after the first {@code {}, so the user's key is escaped: {@code %} becomes {@code %25}
 * and {@code }} becomes {@code %7D}; nothing else changes, and the name still shows the key.
 * Rule names cannot contain {@code |}, so the first {@code |} separates rule from key. The key's
 * UTF-8 bytes are used as they are (binary safe). The prefix may not contain braces.
 */
final class KeyNames {
  private final byte[] prefix;

  KeyNames(String prefix) {
    if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException("key prefix must not contain '{' or '}' (they delimit the Cluster hash tag), was '"
          + prefix + "'");
    }
    this.prefix = prefix.getBytes(StandardCharsets.UTF_8);
  }

  byte[] name(String rule, String key) {
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    byte[] r = rule.getBytes(StandardCharsets.UTF_8);
    int escapes = 0;
    for (byte b : k) {
      if (b == '%' || b == '}') {
        escapes++;
      }
    }
    byte[] out = new byte[prefix.length + r.length + k.length + 2 * escapes + 3];
    System.arraycopy(prefix, 0, out, 0, prefix.length);
    int at = prefix.length;
    out[at++] = '{';
    System.arraycopy(r, 0, out, at, r.length);
    at += r.length;
    out[at++] = '|';
    for (byte b : k) {
      if (b == '%') {
        out[at++] = '%';
        out[at++] = '2';
        out[at++] = '5';
      } else if (b == '}') {
        out[at++] = '%';
        out[at++] = '7';
        out[at++] = 'D';
      } else {
        out[at++] = b;
      }
    }
    out[at] = '}';
    return out;
  }
}
