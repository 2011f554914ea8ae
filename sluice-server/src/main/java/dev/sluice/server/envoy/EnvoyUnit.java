package dev.sluice.server.envoy;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import java.time.Duration;
import java.util.Locale;

/** The time units of Envoy's rate limit configuration, with the lengths Envoy's own service uses. */
enum EnvoyUnit {
  SECOND(1, Unit.SECOND),
  MINUTE(60, Unit.MINUTE),
  HOUR(3_600, Unit.HOUR),
  DAY(86_400, Unit.DAY),
  WEEK(7 * 86_400, Unit.WEEK),
  // Envoy's service counts a month as 30 days and a year as 365.
  MONTH(30 * 86_400, Unit.MONTH),
  YEAR(365 * 86_400, Unit.YEAR);

  private final long seconds;
  private final Unit proto;

  EnvoyUnit(long seconds, Unit proto) {
    this.seconds = seconds;
    this.proto = proto;
  }

  Duration period() {
    return Duration.ofSeconds(seconds);
  }

  Unit proto() {
    return proto;
  }

  String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The unit whose length is exactly {@code period}, or null. */
  static EnvoyUnit ofPeriod(Duration period) {
    for (EnvoyUnit u : values()) {
      if (u.period().equals(period)) {
        return u;
      }
    }
    return null;
  }

  /** The unit named {@code name} in any letter case (as Envoy reads it), or null. */
  static EnvoyUnit fromConfigName(String name) {
    for (EnvoyUnit u : values()) {
      if (u.name().equalsIgnoreCase(name)) {
        return u;
      }
    }
    return null;
  }
}
