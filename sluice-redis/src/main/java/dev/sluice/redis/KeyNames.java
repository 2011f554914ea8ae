package dev.sluice.redis;

import java.io.ByteArrayOutputStream;
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
    ByteArrayOutputStream out = new ByteArrayOutputStream(prefix.length + r.length + k.length + 8);
    out.writeBytes(prefix);
    out.write('{');
    out.writeBytes(r);
    out.write('|');
    for (byte b : k) {
      if (b == '%') {
        out.writeBytes(new byte[] {'%', '2', '5'});
      } else if (b == '}') {
        out.writeBytes(new byte[] {'%', '7', 'D'});
      } else {
        out.write(b);
      }
    }
    out.write('}');
    return out.toByteArray();
  }
}
