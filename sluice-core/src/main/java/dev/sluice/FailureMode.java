package dev.sluice;

import java.util.Locale;

/** What a rule decides when its store is unreachable or slower than its timeout (SPEC §8). */
public enum FailureMode {
  /** Allow, and mark the decision degraded. */
  OPEN,
  /** Deny, and mark the decision degraded. */
  CLOSED,
  /** Decide with an in-process limiter holding a share of the limit; marked degraded. */
  LOCAL;

  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** @throws IllegalArgumentException naming the accepted values */
  public static FailureMode fromConfigName(String name) {
    for (FailureMode m : values()) {
      if (m.configName().equals(name)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown failure_mode '" + name + "'; expected one of open, closed, local");
  }
}
