package dev.sluice.algorithm;

import dev.sluice.DenyReason;
import dev.sluice.Window;
import java.util.List;

/**
 * Rolling windows from sub-bucket counters. Window (L, P) with precision B has buckets of width
 * w = ⌈P/B⌉ aligned to the epoch, and counts the n+1 most recent buckets, n = ⌈P/w⌉. Those
 * buckets cover all of (now − P, now], so the count never misses an admission: the algorithm
 * never admits more than the exact log would. Its error is the other way: an admission at a is
 * held until its bucket leaves, (⌊a/w⌋ + n + 1)·w, which is after a + P by at most
 * X = (n+1)·w − P. X is one bucket width w when w divides P, and less than 2·w otherwise (for
 * P = 1 s and B = 3, w = 333,334 µs and X = 333,336 µs). The Redis store's
 * {@code sliding_window.lua} keeps the same buckets, sized by {@link #bucketWidth} and
 * {@link #bucketCount}.
 */
public final class SlidingWindow extends KeyState {
  /** width, buckets, base, slotIndex, slotCount. */
  private static final long FIELDS = 5 * Heap.REF;

  private final long[] width;
  private final int[] buckets; // n per window
  private final int[] base; // offset of window i's slots
  private final long[] slotIndex;
  private final long[] slotCount;

  public SlidingWindow(List<Window> windows, int precision) {
    super(windows);
    int n = limits.length;
    width = new long[n];
    buckets = new int[n];
    base = new int[n];
    int total = 0;
    for (int i = 0; i < n; i++) {
      width[i] = bucketWidth(periods[i], precision);
      buckets[i] = (int) bucketCount(periods[i], width[i]);
      base[i] = total;
      total += buckets[i] + 1;
    }
    slotIndex = new long[total];
    slotCount = new long[total];
    java.util.Arrays.fill(slotIndex, Long.MIN_VALUE);
  }

  /** w, in µs, for a window of {@code period} µs at {@code precision}. */
  public static long bucketWidth(long period, int precision) {
    return Math.max(1, (period + precision - 1) / precision);
  }

  /** n, the buckets that cover a window of {@code period} µs, each {@code width} µs wide. */
  public static long bucketCount(long period, long width) {
    return (period + width - 1) / width;
  }

  private int slot(int i, long bucket) {
    return base[i] + (int) Math.floorMod(bucket, (long) buckets[i] + 1);
  }

  /** Count of bucket j of window i, 0 if its slot holds another bucket. */
  private long bucketCount(int i, long j) {
    return Counters.count(slotIndex, slotCount, slot(i, j), j);
  }

  private long sum(long now, int i) {
    long cur = Math.floorDiv(now, width[i]);
    long total = 0;
    for (long j = cur - buckets[i]; j <= cur; j++) {
      total += bucketCount(i, j);
    }
    return total;
  }

  @Override
  void evaluate(long now, long cost, Eval e) {
    for (int i = 0; i < limits.length; i++) {
      long used = sum(now, i);
      if (used + cost > limits[i]) {
        e.exceeded[i] = true;
        e.fits = false;
        e.reason = DenyReason.LIMIT_EXCEEDED;
        // Oldest buckets leave first: bucket j stops counting at (j + n + 1) * w.
        long cur = Math.floorDiv(now, width[i]);
        long freed = 0;
        for (long j = cur - buckets[i]; j <= cur; j++) {
          freed += bucketCount(i, j);
          if (used - freed + cost <= limits[i]) {
            e.retryMicros[i] = (j + buckets[i] + 1) * width[i] - now;
            break;
          }
        }
      }
    }
  }

  @Override
  public void commit(long now, long cost, Eval e) {
    for (int i = 0; i < limits.length; i++) {
      long cur = Math.floorDiv(now, width[i]);
      Counters.add(slotIndex, slotCount, slot(i, cur), cur, cost);
    }
  }

  /** The units come out of the sub-bucket the commit went into, while it is in its slot (undo: its time). */
  @Override
  public void refund(long units, Object undo) {
    long t = (Long) undo;
    for (int i = 0; i < limits.length; i++) {
      long j = Math.floorDiv(t, width[i]);
      int at = slot(i, j);
      if (slotIndex[at] == j) {
        slotCount[at] = Math.max(0, slotCount[at] - units);
      }
    }
  }

  /** A kept window has the same buckets (its period and the rule's precision are the same): copied. */
  @Override
  void carry(KeyState old, int[] match, long t0) {
    SlidingWindow o = (SlidingWindow) old;
    for (int j = 0; j < match.length; j++) {
      if (match[j] >= 0) {
        System.arraycopy(o.slotIndex, o.base[match[j]], slotIndex, base[j], buckets[j] + 1);
        System.arraycopy(o.slotCount, o.base[match[j]], slotCount, base[j], buckets[j] + 1);
      }
    }
  }

  @Override
  long remaining(long now, int i) {
    // A count carried from a larger limit may be above this one.
    return Math.max(0, limits[i] - sum(now, i));
  }

  @Override
  long resetMicros(long now, int i) {
    long cur = Math.floorDiv(now, width[i]);
    for (long j = cur; j >= cur - buckets[i]; j--) {
      if (bucketCount(i, j) > 0) {
        return (j + buckets[i] + 1) * width[i] - now;
      }
    }
    return 0;
  }

  @Override
  public long bytes() {
    return bytes(limits.length, slotIndex.length);
  }

  private static long bytes(int windows, int slots) {
    return baseBytes(FIELDS, windows) + Heap.longs(windows) + 2 * Heap.ints(windows) + 2 * Heap.longs(slots);
  }

  /** {@link #bytes()} of a new state for {@code windows} at {@code precision}. */
  public static long bytesFor(List<Window> windows, int precision) {
    long slots = 0;
    for (Window w : windows) {
      long period = w.periodMicros();
      slots += bucketCount(period, bucketWidth(period, precision)) + 1;
    }
    return bytes(windows.size(), (int) slots);
  }
}
