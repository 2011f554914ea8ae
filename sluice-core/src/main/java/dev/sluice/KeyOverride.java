package dev.sluice;

import java.util.List;
import java.util.Objects;

/**
 * Per-key windows for a rule (tiers: premium users get other windows). A pattern is an exact
 * key, or a prefix followed by {@code *} ({@code tenant:acme:*}). The first override of a rule
 * whose pattern matches a key applies; the rule's algorithm stays the same.
 */
public record KeyOverride(List<String> keys, List<Window> windows) {

  public KeyOverride {
    keys = List.copyOf(Objects.requireNonNull(keys, "keys"));
    windows = List.copyOf(Objects.requireNonNull(windows, "windows"));
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("an override needs at least one key pattern");
    }
    if (windows.isEmpty()) {
      throw new IllegalArgumentException("an override needs at least one window");
    }
    for (String k : keys) {
      if (k.isEmpty() || k.equals("*")) {
        throw new IllegalArgumentException("override key pattern must be a key or a prefix followed by '*', was '" + k + "'");
      }
    }
  }

  public boolean matches(String key) {
    for (String p : keys) {
      if (p.endsWith("*") ? key.startsWith(p.substring(0, p.length() - 1)) : key.equals(p)) {
        return true;
      }
    }
    return false;
  }
}
