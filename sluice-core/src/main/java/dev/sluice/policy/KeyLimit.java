package dev.sluice.policy;

import java.util.Objects;

/** The live limit of one (rule, key), as listed. */
public record KeyLimit(String rule, String key, LiveLimit limit) {
  public KeyLimit {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(limit, "limit");
  }
}
