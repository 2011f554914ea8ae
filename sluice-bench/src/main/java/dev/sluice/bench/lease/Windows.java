package dev.sluice.bench.lease;

/**
 * Admitted ÷ limit over a run's windows, from admissions per millisecond merged across workers,
 * each counted by the time its request was sent and by the time its answer came. The store stamps
 * an admission between the two, so a window's true count lies between
 * {@code answered before its end − sent before its start} and {@code sent before its end −
 * answered before its start}; by answer time alone is the estimate (a round trip late for the
 * store's decisions, exact for leased ones). Bin i holds [i, i + 1) ms after the start; a window
 * (a, a + P] is taken as bins a … a + P − 1, exact up to one millisecond at either end.
 */
public final class Windows {
  private final long[] sent;
  private final long[] answered;

  /** @param sent admissions per ms by send time; {@code answered} the same by answer time, as long */
  public Windows(int[] sent, int[] answered) {
    if (sent.length != answered.length) {
      throw new IllegalArgumentException("sent and answered cover different runs");
    }
    this.sent = prefix(sent);
    this.answered = prefix(answered);
  }

  /**
   * Over windows of {@code periodMs} starting in [from, to]: by answer time, the lowest and highest
   * ratio; the lowest lower bound and highest upper bound; the mean width between the bounds.
   */
  public record Range(double min, double max, double minLower, double maxUpper, double meanWidth, int windows) {}

  /** @throws IllegalArgumentException if no full window starts in [from, to] */
  public Range sliding(int periodMs, long limit, int from, int to) {
    int last = Math.min(to, sent.length - 1 - periodMs);
    if (from < 0 || last < from) {
      throw new IllegalArgumentException("no full window of " + periodMs + " ms starts in [" + from + ", " + to
          + "] of a " + (sent.length - 1) + " ms record");
    }
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    long minLower = Long.MAX_VALUE;
    long maxUpper = Long.MIN_VALUE;
    double width = 0;
    for (int a = from; a <= last; a++) {
      int end = a + periodMs;
      long byAnswer = answered[end] - answered[a];
      long lower = answered[end] - sent[a];
      long upper = sent[end] - answered[a];
      min = Math.min(min, byAnswer);
      max = Math.max(max, byAnswer);
      minLower = Math.min(minLower, lower);
      maxUpper = Math.max(maxUpper, upper);
      width += upper - lower;
    }
    int n = last - from + 1;
    double l = limit;
    return new Range(min / l, max / l, minLower / l, maxUpper / l, width / n / l, n);
  }

  /**
   * A token bucket's bound over every span (x, x + d] with x + d ≤ {@code millis}: the highest
   * admitted ÷ (L + d·L/P), by answer time ({@code [0]}) and its upper bound ({@code [1]}). The
   * bucket keeps it at ≤ 1; leases at ≤ 1 + U ÷ (L + d·L/P).
   */
  public double[] tokenBucketMax(int periodMs, long limit, int millis) {
    double perMs = (double) limit / periodMs;
    double max = 0;
    double maxUpper = 0;
    for (int x = 0; x < millis; x++) {
      for (int end = x + 1; end <= millis; end++) {
        double bound = limit + (end - x) * perMs;
        max = Math.max(max, (answered[end] - answered[x]) / bound);
        maxUpper = Math.max(maxUpper, (sent[end] - answered[x]) / bound);
      }
    }
    return new double[] {max, maxUpper};
  }

  private static long[] prefix(int[] bins) {
    long[] p = new long[bins.length + 1];
    for (int i = 0; i < bins.length; i++) {
      p[i + 1] = p[i] + bins[i];
    }
    return p;
  }
}
