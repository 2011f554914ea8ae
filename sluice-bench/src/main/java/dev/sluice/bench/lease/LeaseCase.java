package dev.sluice.bench.lease;

import dev.sluice.Algorithm;
import java.util.List;

/**
 * One measured case: the rule, its mode and each worker's demand.
 *
 * @param rates requests per second per worker until {@code skewAtMs}; 0 for unpaced
 * @param skewRates the same after {@code skewAtMs}
 */
public record LeaseCase(String name, boolean leased, Algorithm algorithm, long limit, long periodMs,
    int durationMs, double[] rates, int skewAtMs, double[] skewRates) {

  public static final List<String> NAMES = List.of("throughput", "sliding_log", "token_bucket", "skew", "exact_log");

  /** A limit no one reaches: B = 1 % of it is 10⁷ units. */
  static final long UNREACHED = 1_000_000_000L;
  static final int THROUGHPUT_MS = 4_000;
  static final int STEADY_MS = 6_000;
  static final int SKEW_MS = 8_000;
  static final int SKEW_AT_MS = 3_500;
  /** The share of the total demand the hot worker takes after the skew. */
  static final double HOT_SHARE = 0.8;
  /** Windows before this are the start (empty log, full bucket, first leases), not steady state. */
  public static final int STEADY_FROM_MS = 2_000;
  /** Three report intervals of the default lease policy. */
  public static final int AFTER_SKEW_MS = 300;

  /** @throws IllegalArgumentException naming an unknown case */
  public static List<LeaseCase> named(String name, long limit, double demand, int workers) {
    double even = demand * limit / workers;
    double[] steady = fill(workers, even);
    double[] none = fill(workers, 0);
    return switch (name) {
      case "throughput" -> List.of(
          new LeaseCase("throughput exact", false, Algorithm.TOKEN_BUCKET, UNREACHED, 1000, THROUGHPUT_MS, none,
              THROUGHPUT_MS, none),
          new LeaseCase("throughput leased", true, Algorithm.TOKEN_BUCKET, UNREACHED, 1000, THROUGHPUT_MS, none,
              THROUGHPUT_MS, none));
      case "sliding_log" -> List.of(new LeaseCase("sliding_log leased", true, Algorithm.SLIDING_LOG, limit, 1000,
          STEADY_MS, steady, STEADY_MS, steady));
      case "token_bucket" -> List.of(new LeaseCase("token_bucket leased", true, Algorithm.TOKEN_BUCKET, limit, 1000,
          STEADY_MS, steady, STEADY_MS, steady));
      case "exact_log" -> List.of(new LeaseCase("sliding_log exact", false, Algorithm.SLIDING_LOG, limit, 1000,
          STEADY_MS, steady, STEADY_MS, steady));
      case "skew" -> {
        double[] skewed = fill(workers, demand * limit * (1 - HOT_SHARE) / (workers - 1));
        skewed[0] = demand * limit * HOT_SHARE;
        yield List.of(new LeaseCase("sliding_log leased, skew", true, Algorithm.SLIDING_LOG, limit, 1000, SKEW_MS,
            steady, SKEW_AT_MS, skewed));
      }
      default -> throw new IllegalArgumentException("unknown case '" + name + "'; cases: " + String.join(",", NAMES));
    };
  }

  static final int WARM_UP_MS = 2_000;

  /** This case shortened to a warm-up whose figures are not counted. */
  LeaseCase warmUp() {
    return new LeaseCase(name + " (warm-up)", leased, algorithm, limit, periodMs, WARM_UP_MS, rates, WARM_UP_MS,
        rates);
  }

  boolean warmUpOnly() {
    return durationMs == WARM_UP_MS;
  }

  boolean paced() {
    return rates[0] > 0;
  }

  boolean skewed() {
    return skewAtMs < durationMs;
  }

  private static double[] fill(int n, double v) {
    double[] a = new double[n];
    java.util.Arrays.fill(a, v);
    return a;
  }
}
