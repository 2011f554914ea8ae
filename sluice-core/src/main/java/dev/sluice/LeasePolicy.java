package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * Leased mode ({@code mode: leased}, see docs/scaling.md): instances admit a rule's hot keys
 * locally from units taken out of the store's exact state, in sizes an elected leader sets from
 * their usage reports; the store never admits more than the limit, and the units all instances
 * hold unused, at most {@code slack} of the smallest limit, bound the over-admission.
 *
 * @param leaseLength how long a published size holds and units may stay unused before they are
 *     given back; at least twice {@code reportInterval}, at most an hour
 * @param reportInterval how often an instance reports its usage and reads its sizes; 10 ms to a minute
 * @param slack the most units all instances together may hold unused, as a share of the smallest
 *     limit of a key's windows: 0.0001 (0.01 %) to 0.1 (10 %)
 */
public record LeasePolicy(Duration leaseLength, Duration reportInterval, double slack) {
  public static final Duration DEFAULT_LEASE_LENGTH = Duration.ofSeconds(1);
  public static final Duration DEFAULT_REPORT_INTERVAL = Duration.ofMillis(100);
  public static final double DEFAULT_SLACK = 0.01;
  public static final double MIN_SLACK = 0.0001;
  public static final double MAX_SLACK = 0.1;
  public static final Duration MIN_REPORT_INTERVAL = Duration.ofMillis(10);
  public static final Duration MAX_REPORT_INTERVAL = Duration.ofMinutes(1);
  public static final Duration MAX_LEASE_LENGTH = Duration.ofHours(1);

  /** The defaults: leases of 1 s, reports every 100 ms, 1 % slack. */
  public static final LeasePolicy DEFAULTS = new LeasePolicy(DEFAULT_LEASE_LENGTH, DEFAULT_REPORT_INTERVAL,
      DEFAULT_SLACK);

  /**
   * The settings of a rule whose shortest period is {@code shortest}, each one given as null at
   * its default: a lease of 1 s, or {@code shortest} if shorter; reports every 100 ms, or every
   * half lease if shorter; 1 % slack. Both configuration formats read {@code mode: leased} this way.
   *
   * @throws IllegalArgumentException naming the field that is out of range, or a lease longer
   *     than {@code shortest} (units given back after the window forgot them would free nothing)
   */
  public static LeasePolicy withDefaults(Duration shortest, Duration leaseLength, Duration reportInterval,
      Double slack) {
    Duration length = leaseLength != null ? leaseLength : min(DEFAULT_LEASE_LENGTH, shortest);
    if (length.compareTo(shortest) > 0) {
      throw new IllegalArgumentException("lease_length " + length + " is longer than the rule's shortest period, "
          + shortest + " (units given back after the window forgot them would free nothing)");
    }
    Duration interval = reportInterval != null ? reportInterval : min(DEFAULT_REPORT_INTERVAL, length.dividedBy(2));
    return new LeasePolicy(length, interval, slack != null ? slack : DEFAULT_SLACK);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** @throws IllegalArgumentException naming the field that is out of range */
  public LeasePolicy {
    Objects.requireNonNull(leaseLength, "leaseLength");
    Objects.requireNonNull(reportInterval, "reportInterval");
    if (reportInterval.compareTo(MIN_REPORT_INTERVAL) < 0 || reportInterval.compareTo(MAX_REPORT_INTERVAL) > 0) {
      throw new IllegalArgumentException("report_interval must be between 10ms and 1m, was " + reportInterval);
    }
    if (leaseLength.compareTo(reportInterval.multipliedBy(2)) < 0 || leaseLength.compareTo(MAX_LEASE_LENGTH) > 0) {
      throw new IllegalArgumentException("lease_length must be between twice report_interval (" + reportInterval
          + ") and 1h, was " + leaseLength);
    }
    if (!(slack >= MIN_SLACK && slack <= MAX_SLACK)) {
      throw new IllegalArgumentException("lease_slack must be between 0.01% and 10%, was " + slack * 100 + "%");
    }
  }

  /**
   * The units all instances may hold unused for a key counted in {@code windows}: the slack's
   * share of the smallest limit, rounded down.
   */
  public long budget(java.util.List<Window> windows) {
    long min = Long.MAX_VALUE;
    for (Window w : windows) {
      min = Math.min(min, w.limit());
    }
    return (long) Math.floor(slack * min);
  }
}
