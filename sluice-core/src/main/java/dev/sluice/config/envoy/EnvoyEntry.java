package dev.sluice.config.envoy;

import java.util.List;
import java.util.Objects;

/**
 * One entry of a request's descriptor, as Envoy sends it: {@code remote_address} and the
 * client's address, {@code generic_key} and a constant, a header's name and value.
 */
public record EnvoyEntry(String key, String value) {

  public EnvoyEntry {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
  }

  /**
   * The Sluice key that counts a descriptor: its entries as {@code key=value} joined by
   * {@code /}, with {@code %}, {@code /} and {@code =} percent-encoded so that distinct
   * descriptors never share a key.
   */
  public static String key(List<EnvoyEntry> descriptor) {
    return key(descriptor, null);
  }

  /**
   * As {@link #key(List)}, but where {@code shared} has a wildcard for an entry it stands for the
   * entry's value ({@code files=files%2F*}), so that every value it matches counts in one counter.
   */
  static String key(List<EnvoyEntry> descriptor, String[] shared) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < descriptor.size(); i++) {
      EnvoyEntry e = descriptor.get(i);
      if (b.length() > 0) {
        b.append('/');
      }
      escape(b, e.key());
      b.append('=');
      escape(b, shared != null && shared[i] != null ? shared[i] : e.value());
    }
    return b.toString();
  }

  private static void escape(StringBuilder b, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '%' -> b.append("%25");
        case '/' -> b.append("%2F");
        case '=' -> b.append("%3D");
        default -> b.append(c);
      }
    }
  }
}
