package dev.sluice.algorithm;

import dev.sluice.DenyReason;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.util.List;

/**
 * GCRA, one theoretical arrival time (TAT) per window. The emission interval is T = ⌈P/L⌉
 * microseconds (rounded up, so the refill rate never exceeds L/P) and the burst tolerance is
 * L·T: an empty bucket holds L units. Cost c fits when max(TAT, now) + c·T − now ≤ L·T. The
 * Redis store's {@code token_bucket.lua} keeps the same TATs, which the store reads into a state
 * {@link #withArrivals} them to report on it.
 */
public final class TokenBucket extends KeyState {
  /** interval, tat. */
  private static final long FIELDS = 2 * Heap.REF;

  private final long[] interval;
  private final long[] tat;

  public TokenBucket(List<Window> windows) {
    super(windows);
    interval = new long[limits.length];
    tat = new long[limits.length];
    for (int i = 0; i < limits.length; i++) {
      interval[i] = emissionInterval(limits[i], periods[i]);
      tat[i] = Long.MIN_VALUE;
    }
  }

  /**
   * T for a window of {@code limit} units per {@code period} µs; also the Redis script's per-window
   * argument ({@code token_bucket.lua}, {@code leaky_bucket.lua}).
   */
  public static long emissionInterval(long limit, long period) {
    return Math.max(1, (period + limit - 1) / limit);
  }

  @Override
  void evaluate(long now, long cost, Eval e) {
    for (int i = 0; i < limits.length; i++) {
      long excess = excess(i, tat[i], now, cost);
      if (excess > 0) {
        e.exceeded[i] = true;
        e.retryMicros[i] = excess;
        e.fits = false;
        e.reason = DenyReason.LIMIT_EXCEEDED;
      }
    }
  }

  /** How far past the burst tolerance window i would be after {@code cost} at {@code now}; ≤ 0 fits. */
  private long excess(int i, long tat, long now, long cost) {
    return Math.max(tat, now) + cost * interval[i] - now - limits[i] * interval[i];
  }

  @Override
  boolean deniedRacy(long now, long cost) {
    for (int i = 0; i < limits.length; i++) {
      // A cost above the limit never fits (and could overflow excess).
      if (cost > limits[i] || excess(i, tat[i], now, cost) > 0) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void commit(long now, long cost, Eval e) {
    if (cost == 0) {
      return;
    }
    for (int i = 0; i < limits.length; i++) {
      tat[i] = Math.max(tat[i], now) + cost * interval[i];
    }
  }

  /** Each window's TAT right after the commit. */
  @Override
  public Object undoFor(long now, long cost) {
    long[] after = new long[limits.length];
    for (int i = 0; i < limits.length; i++) {
      after[i] = Math.max(tat[i], now) + cost * interval[i];
    }
    return after;
  }

  /**
   * Each TAT moves back by units·T, but never below what the admissions since the commit alone
   * left (they raised it by delta): a give-back never lets more through than the limit allows; nor
   * later than it stands. A TAT at or before the key's latest time acts as that time.
   */
  @Override
  public void refund(long units, Object undo) {
    long[] after = (long[]) undo;
    for (int i = 0; i < limits.length; i++) {
      if (tat[i] == Long.MIN_VALUE) {
        continue; // nothing held: the key was forgotten since
      }
      long delta = tat[i] - after[i];
      long back = tat[i] - units * interval[i];
      // delta < 0: other give-backs came first; this one's units are still in the TAT.
      // Admissions after the grant had drained raised the TAT by more than their units (delta
      // spans the idle time too): a give-back never moves the TAT later.
      tat[i] = Math.min(tat[i], Math.max(back, delta >= 0 ? lastSeen + delta : lastSeen));
    }
  }

  /**
   * Each kept window's backlog at {@code t0}, rescaled to its new interval. Not clamped to a full
   * bucket: a backlog beyond it denies until it has refilled below it, and a limit lowered and
   * then restored finds every unit consumed under it.
   */
  @Override
  void carry(KeyState old, int[] match, long t0) {
    TokenBucket o = (TokenBucket) old;
    for (int j = 0; j < match.length; j++) {
      if (match[j] >= 0) {
        long b = rescale(ahead(o.tat[match[j]], t0), o.interval[match[j]], interval[j]);
        tat[j] = b == 0 ? Long.MIN_VALUE : t0 + b;
      }
    }
  }

  @Override
  long remaining(long now, int i) {
    long backlog = ahead(tat[i], now);
    // A carried backlog may exceed a full bucket.
    return Math.max(0, limits[i] - (backlog + interval[i] - 1) / interval[i]);
  }

  @Override
  long resetMicros(long now, int i) {
    return ahead(tat[i], now);
  }

  @Override
  public long bytes() {
    return bytes(limits.length);
  }

  /** {@link #bytes()} of a state for {@code windows} windows. */
  public static long bytes(int windows) {
    return baseBytes(FIELDS, windows) + 2 * Heap.longs(windows);
  }

  /**
   * A state of {@code windows} whose windows' TATs are {@code tat}: the state a stored value
   * stands for, which the Redis store reports on as the memory store does ({@link #reportStored}).
   */
  public static TokenBucket withArrivals(List<Window> windows, long[] tat) {
    TokenBucket s = new TokenBucket(windows);
    System.arraycopy(tat, 0, s.tat, 0, s.tat.length);
    return s;
  }
}
