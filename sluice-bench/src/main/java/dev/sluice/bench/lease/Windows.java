package dev.sluice.bench.lease;

/**
 * Admitted ÷ limit over a run's windows, from admissions per millisecond merged across workers.
 * Bin i holds the admissions answered in [i, i + 1) ms after the start; a window (a, a + P] is
 * taken as bins a … a + P − 1, so each figure is exact up to one millisecond at either end.
 */
public final class Windows {
  private Windows() {}

  /** The lowest and highest admitted ÷ limit over the windows (a, a + P] of a run. */
  public record Range(double min, double max, int windows) {}

  /**
   * Every window of {@code periodMs} starting at a millisecond in [{@code from}, {@code to}]: the
   * run's bins must cover a + P for the last.
   *
   * @throws IllegalArgumentException if no full window starts in the range
   */
  public static Range sliding(int[] perMs, int periodMs, long limit, int from, int to) {
    int last = Math.min(to, perMs.length - periodMs);
    if (from < 0 || last < from) {
      throw new IllegalArgumentException("no full window of " + periodMs + " ms starts in [" + from + ", " + to
          + "] of a " + perMs.length + " ms run");
    }
    long sum = 0;
    for (int i = from; i < from + periodMs; i++) {
      sum += perMs[i];
    }
    long min = sum;
    long max = sum;
    for (int a = from + 1; a <= last; a++) {
      sum += perMs[a + periodMs - 1] - perMs[a - 1];
      min = Math.min(min, sum);
      max = Math.max(max, sum);
    }
    return new Range((double) min / limit, (double) max / limit, last - from + 1);
  }

  /**
   * A token bucket's bound over every span (x, x + d] of the run, d ≥ 1 ms: the highest
   * admitted ÷ (L + d·L/P), which the bucket keeps at ≤ 1 (leases: ≤ 1 + U ÷ (L + d·L/P)).
   */
  public static double tokenBucketMax(int[] perMs, int periodMs, long limit) {
    int n = perMs.length;
    long[] prefix = new long[n + 1];
    for (int i = 0; i < n; i++) {
      prefix[i + 1] = prefix[i] + perMs[i];
    }
    double perMsRate = (double) limit / periodMs;
    double max = 0;
    for (int x = 0; x < n; x++) {
      for (int end = x + 1; end <= n; end++) {
        double r = (prefix[end] - prefix[x]) / (limit + (end - x) * perMsRate);
        if (r > max) {
          max = r;
        }
      }
    }
    return max;
  }
}
