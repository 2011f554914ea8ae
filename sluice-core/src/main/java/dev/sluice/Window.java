package dev.sluice;

import java.time.Duration;

/**
 * {@code limit} units per {@code period}. Periods have microsecond resolution; configuration
 * files give at least millisecond precision.
 */
public record Window(long limit, Duration period) {

  /**
   * @throws IllegalArgumentException if {@code limit < 1}, or {@code period} is not positive or
   *     not a whole number of microseconds
   * @throws NullPointerException if {@code period} is null
   */
  public Window {
    if (limit < 1) {
      throw new IllegalArgumentException("window limit must be >= 1, was " + limit);
    }
    if (period == null) {
      throw new NullPointerException("window period");
    }
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("window period must be > 0, was " + period);
    }
    if (period.toNanos() % 1000 != 0) {
      throw new IllegalArgumentException("window period must be a whole number of microseconds, was " + period);
    }
  }

  public static Window of(long limit, Duration period) {
    return new Window(limit, period);
  }

  public static Window perMillis(long limit, long periodMillis) {
    return new Window(limit, Duration.ofMillis(periodMillis));
  }

  public static Window perSeconds(long limit, long periodSeconds) {
    return new Window(limit, Duration.ofSeconds(periodSeconds));
  }

  public long periodMicros() {
    return period.toNanos() / 1000;
  }

  /** The period as configuration writes it, in the largest unit that divides it: {@code 1h}, {@code 90s}, {@code 1500ms}. */
  public String periodText() {
    long micros = periodMicros();
    long[] size = {86_400_000_000L, 3_600_000_000L, 60_000_000L, 1_000_000L, 1_000L};
    String[] unit = {"d", "h", "m", "s", "ms"};
    for (int i = 0; i < size.length; i++) {
      if (micros % size[i] == 0) {
        return micros / size[i] + unit[i];
      }
    }
    return micros + "us";
  }

  public long periodMillis() {
    return period.toMillis();
  }

  @Override
  public String toString() {
    return limit + "/" + period;
  }
}
