package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * A rule's penalty box: a key denied {@code after} times within {@code within} is banned for
 * {@code duration}. While banned every request naming that (rule, key) is denied with
 * {@link DenyReason#BANNED}, consuming nothing, and it costs no store call on an instance that
 * already knows the ban.
 *
 * @param after denials that start a ban, 1 to 1,000,000
 * @param within the period they are counted over, at most a day
 * @param duration how long the ban lasts, at most 30 days
 */
public record BanPolicy(long after, Duration within, Duration duration) {

  public static final long MAX_AFTER = 1_000_000;
  public static final Duration MAX_WITHIN = Duration.ofDays(1);
  public static final Duration MAX_DURATION = Duration.ofDays(30);

  /** @throws IllegalArgumentException naming the field that is out of range */
  public BanPolicy {
    Objects.requireNonNull(within, "within");
    Objects.requireNonNull(duration, "duration");
    if (after < 1 || after > MAX_AFTER) {
      throw new IllegalArgumentException("ban.after must be between 1 and " + MAX_AFTER + ", was " + after);
    }
    if (within.toMillis() < 1 || within.compareTo(MAX_WITHIN) > 0) {
      throw new IllegalArgumentException("ban.within must be between 1ms and 1d, was " + within);
    }
    if (duration.toMillis() < 1 || duration.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException("ban.for must be between 1ms and 30d, was " + duration);
    }
  }
}
