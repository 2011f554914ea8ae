package dev.sluice.bench.redis;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Latencies in nanoseconds, recorded concurrently, with under 1% error: 128 linear sub-buckets per
 * power of two.
 */
final class LatencyHistogram {
  private static final int SUB_BITS = 7;
  private static final int SUB = 1 << SUB_BITS;
  private final AtomicLongArray counts = new AtomicLongArray(64 * SUB);

  void record(long nanos) {
    counts.incrementAndGet(index(Math.max(0, nanos)));
  }

  private static int index(long v) {
    if (v < SUB) {
      return (int) v;
    }
    int exp = 63 - Long.numberOfLeadingZeros(v);
    int shift = exp - SUB_BITS;
    return ((shift + 1) << SUB_BITS) + (int) ((v >>> shift) & (SUB - 1));
  }

  /** The smallest value that bucket {@code i} holds. */
  private static long lowest(int i) {
    if (i < SUB) {
      return i;
    }
    int shift = (i >>> SUB_BITS) - 1;
    long sub = i & (SUB - 1);
    return (SUB | sub) << shift;
  }

  long count() {
    long n = 0;
    for (int i = 0; i < counts.length(); i++) {
      n += counts.get(i);
    }
    return n;
  }

  /** The value at quantile {@code q} (0..1), as the middle of its bucket. */
  long quantile(double q) {
    long total = count();
    if (total == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(q * total));
    long seen = 0;
    for (int i = 0; i < counts.length(); i++) {
      seen += counts.get(i);
      if (seen >= rank) {
        long lo = lowest(i);
        long hi = i + 1 < counts.length() ? lowest(i + 1) : lo;
        return (lo + hi) / 2;
      }
    }
    return lowest(counts.length() - 1);
  }
}
