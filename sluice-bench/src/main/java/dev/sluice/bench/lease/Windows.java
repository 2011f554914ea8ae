package dev.sluice.bench.lease;

import java.util.ArrayList;
import java.util.List;

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
   * ratio; the lowest lower bound and highest upper bound; the highest lower bound, what some
   * window certainly held (an excursion is established only by it: the estimate by answer time
   * counts a late answer in the window it arrives in, though the store may have stamped it before
   * the window began); the mean width between the bounds.
   */
  public record Range(double min, double max, double minLower, double maxUpper, double maxLower, double meanWidth,
      int windows) {}

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
    long maxLower = Long.MIN_VALUE;
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
      maxLower = Math.max(maxLower, lower);
      width += upper - lower;
    }
    int n = last - from + 1;
    double l = limit;
    return new Range(min / l, max / l, minLower / l, maxUpper / l, maxLower / l, width / n / l, n);
  }

  /**
   * A token bucket's bound over every span (x, x + d] with x + d ≤ {@code millis}: the highest
   * admitted ÷ (L + d·L/P), by answer time ({@code [0]}), its upper bound ({@code [1]}) and the
   * highest lower bound ({@code [2]}, what some span certainly held). The bucket keeps it at ≤ 1;
   * leases at ≤ 1 + U ÷ (L + d·L/P).
   */
  public double[] tokenBucketMax(int periodMs, long limit, int millis) {
    double perMs = (double) limit / periodMs;
    double max = 0;
    double maxUpper = 0;
    double maxLower = 0;
    for (int x = 0; x < millis; x++) {
      for (int end = x + 1; end <= millis; end++) {
        double bound = limit + (end - x) * perMs;
        max = Math.max(max, (answered[end] - answered[x]) / bound);
        maxUpper = Math.max(maxUpper, (sent[end] - answered[x]) / bound);
        maxLower = Math.max(maxLower, (answered[end] - sent[x]) / bound);
      }
    }
    return new double[] {max, maxUpper, maxLower};
  }

  /**
   * The admissions of a raw record ({@code --raw}: gzipped CSV, {@code ms} then {@code sentW,
   * answeredW} per worker), merged across workers.
   */
  public static Windows read(java.nio.file.Path csvGz) throws java.io.IOException {
    List<int[]> rows = new ArrayList<>();
    try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(
        new java.util.zip.GZIPInputStream(java.nio.file.Files.newInputStream(csvGz)),
        java.nio.charset.StandardCharsets.UTF_8))) {
      String head = in.readLine();
      if (head == null || !head.startsWith("ms,sent0,answered0")) {
        throw new IllegalArgumentException(csvGz + " is not a raw record of admissions per millisecond");
      }
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        String[] f = line.split(",");
        int[] merged = new int[2];
        for (int i = 1; i + 1 < f.length; i += 2) {
          merged[0] += Integer.parseInt(f[i]);
          merged[1] += Integer.parseInt(f[i + 1]);
        }
        rows.add(merged);
      }
    }
    int[] sent = new int[rows.size()];
    int[] answered = new int[rows.size()];
    for (int i = 0; i < sent.length; i++) {
      sent[i] = rows.get(i)[0];
      answered[i] = rows.get(i)[1];
    }
    return new Windows(sent, answered);
  }

  /** Milliseconds recorded. */
  public int millis() {
    return sent.length - 1;
  }

  private static long[] prefix(int[] bins) {
    long[] p = new long[bins.length + 1];
    for (int i = 0; i < bins.length; i++) {
      p[i + 1] = p[i] + bins[i];
    }
    return p;
  }
}
