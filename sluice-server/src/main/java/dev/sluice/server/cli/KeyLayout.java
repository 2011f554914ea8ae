package dev.sluice.server.cli;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * How the Redis store names its keys — {@code <prefix>{<rule>|<key>}}, the user's key with
 * {@code %} and {@code }} escaped (see {@code dev.sluice.redis.KeyNames}) — read backwards: which
 * rule a key belongs to, and the SCAN pattern that finds the keys under a prefix.
 */
final class KeyLayout {
  private final String prefix;
  private final byte[] prefixBytes;

  /** @throws IllegalArgumentException if {@code prefix} has a brace, which the store never accepts */
  KeyLayout(String prefix) {
    if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException("--prefix must not contain '{' or '}' (the store's key names use them for "
          + "the Cluster hash tag), was '" + prefix + "'");
    }
    this.prefix = prefix;
    this.prefixBytes = prefix.getBytes(StandardCharsets.UTF_8);
  }

  String prefix() {
    return prefix;
  }

  /** {@code <prefix>*} with the prefix's glob characters escaped, so that it matches the prefix literally. */
  byte[] matchPattern() {
    ByteArrayOutputStream out = new ByteArrayOutputStream(prefixBytes.length + 4);
    for (byte b : prefixBytes) {
      if (b == '*' || b == '?' || b == '[' || b == ']' || b == '\\') {
        out.write('\\');
      }
      out.write(b);
    }
    out.write('*');
    return out.toByteArray();
  }

  boolean hasPrefix(byte[] name) {
    if (name.length < prefixBytes.length) {
      return false;
    }
    for (int i = 0; i < prefixBytes.length; i++) {
      if (name[i] != prefixBytes[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * The rule of a key the store wrote, or null if {@code name} is not named as the store names
   * keys: prefix, {@code {}, a rule name (letters, digits, {@code _ . : / -}; never {@code |}),
   * {@code |}, the escaped key (no {@code }}), and a final {@code }}.
   */
  String ruleOf(byte[] name) {
    int p = prefixBytes.length;
    if (!hasPrefix(name) || name.length < p + 4 || name[p] != '{' || name[name.length - 1] != '}') {
      return null;
    }
    int bar = -1;
    for (int i = p + 1; i < name.length - 1; i++) {
      byte b = name[i];
      if (bar < 0) {
        if (b == '|') {
          bar = i;
        } else if (!ruleChar(b)) {
          return null;
        }
      } else if (b == '}') {
        return null;
      }
    }
    int length = bar - p - 1;
    if (bar < 0 || length < 1 || length > 128) {
      return null;
    }
    return new String(name, p + 1, length, StandardCharsets.US_ASCII);
  }

  private static final byte[] POLICIES = "{policies}:".getBytes(StandardCharsets.US_ASCII);

  /**
   * Whether {@code name} is one of the store's policy keys, {@code <prefix>{policies}:…}: records
   * (live limits, bans, lists) and their log, denial sketches, the instances' heartbeats. Records
   * have no TTL by design; the others are given one by the store.
   */
  boolean isPolicyKey(byte[] name) {
    int p = prefixBytes.length;
    return hasPrefix(name) && name.length > p + POLICIES.length
        && java.util.Arrays.equals(name, p, p + POLICIES.length, POLICIES, 0, POLICIES.length);
  }

  /** Whether {@code name} is a policy key or a ban, audit or refund key beside a key's state: never state. */
  boolean isPolicy(byte[] name) {
    return isPolicyKey(name) || siblingRuleOf(name) != null;
  }

  private static final byte[][] SIBLING_SUFFIXES = {
      ":ban".getBytes(StandardCharsets.US_ASCII), ":audit".getBytes(StandardCharsets.US_ASCII)};
  private static final byte[] REFUND = ":refund:".getBytes(StandardCharsets.US_ASCII);
  private static final int REFUND_ID = 16;

  /**
   * The rule of a key the store wrote beside a state key ({@code <state key>:ban}, {@code <state
   * key>:audit}, {@code <state key>:refund:<16 hex digits>}), or null if {@code name} is not one.
   * They are not state: their TTL is the ban's, the state's or the refund's, set by the store.
   */
  String siblingRuleOf(byte[] name) {
    for (byte[] suffix : SIBLING_SUFFIXES) {
      int base = name.length - suffix.length;
      if (base > 0 && java.util.Arrays.equals(name, base, name.length, suffix, 0, suffix.length)) {
        return ruleOf(java.util.Arrays.copyOf(name, base));
      }
    }
    int base = name.length - REFUND_ID - REFUND.length;
    if (base > 0 && java.util.Arrays.equals(name, base, base + REFUND.length, REFUND, 0, REFUND.length)) {
      for (int i = base + REFUND.length; i < name.length; i++) {
        if (Character.digit(name[i], 16) < 0) {
          return null;
        }
      }
      return ruleOf(java.util.Arrays.copyOf(name, base));
    }
    return null;
  }

  private static boolean ruleChar(byte b) {
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' || b == '.'
        || b == ':' || b == '/' || b == '-';
  }
}
