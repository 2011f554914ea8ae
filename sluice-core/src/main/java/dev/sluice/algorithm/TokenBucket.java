package dev.sluice.algorithm;

import dev.sluice.DenyReason;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.ResolvedItem;
import java.util.List;

/**
 * GCRA, one theoretical arrival time (TAT) per window. The emission interval is T = ⌈P/L⌉
 * microseconds (rounded up, so the refill rate never exceeds L/P) and the burst tolerance is
 * L·T: an empty bucket holds L units. Cost c fits when max(TAT, now) + c·T − now ≤ L·T. The
 * Redis store's {@code token_bucket.lua} keeps the same TATs, which {@link #reportStored} reads.
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
   * The report of a decision on {@code item} from the value {@code token_bucket.lua} keeps for its
   * key ({@code length} bytes of {@code b} at {@code from}: the header, each window's TAT as an
   * int64, then for other windows than the rule's own those windows, {@link StoredValue#trailer}),
   * decided at {@code now}:
   * the value written by an admission, or read by a denial.
   *
   * @throws IllegalArgumentException if those bytes are not a value for the item's windows
   */
  public static List<WindowState> reportStored(ResolvedItem item, boolean allowed, byte[] b, int from, int length,
      long now) {
    List<Window> windows = item.windows();
    int fields = StoredValue.HEADER + 8 * windows.size();
    if (length != fields && length != fields + StoredValue.trailer(windows.size())) {
      throw new IllegalArgumentException("a token_bucket value of " + length + " bytes for " + windows.size()
          + " windows");
    }
    TokenBucket s = new TokenBucket(windows);
    for (int i = 0; i < windows.size(); i++) {
      s.tat[i] = StoredValue.int64(b, from + StoredValue.HEADER + 8 * i);
    }
    return s.reportStored(StoredValue.last(b, from), now, item.cost(), allowed);
  }
}
