package dev.sluice.config.envoy;

import java.time.Duration;
import java.util.Locale;

/** The time units of Envoy's rate limit configuration, with the lengths Envoy's own service uses. */
public enum EnvoyUnit {
  SECOND(1),
  MINUTE(60),
  HOUR(3_600),
  DAY(86_400),
  WEEK(7 * 86_400),
  // Envoy's service counts a month as 30 days and a year as 365.
  MONTH(30 * 86_400),
  YEAR(365 * 86_400);

  private final long seconds;

  EnvoyUnit(long seconds) {
    this.seconds = seconds;
  }

  public Duration period() {
    return Duration.ofSeconds(seconds);
  }

  /** The unit as configuration files write it: {@code second}, {@code minute}, ... */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The unit whose length is exactly {@code period}, or null. */
  public static EnvoyUnit ofPeriod(Duration period) {
    for (EnvoyUnit u : values()) {
      if (u.period().equals(period)) {
        return u;
      }
    }
    return null;
  }

  /** The unit named {@code name} in any letter case (as Envoy reads it), or null. */
  public static EnvoyUnit fromConfigName(String name) {
    for (EnvoyUnit u : values()) {
      if (u.name().equalsIgnoreCase(name)) {
        return u;
      }
    }
    return null;
  }
}
