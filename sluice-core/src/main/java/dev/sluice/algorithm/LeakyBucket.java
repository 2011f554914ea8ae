package dev.sluice.algorithm;

import dev.sluice.DenyReason;
import dev.sluice.Rule;
import dev.sluice.Window;
import java.util.List;

/**
 * Shaping. Each window keeps the time its next unit may start; its slots are T = ⌈P/L⌉ apart.
 * A request starts at the latest of now and every window's next slot, waits (start − now), and
 * is denied if that wait exceeds {@code max_wait}. An admitted request of cost c moves every
 * window's next slot to start + c·T. The Redis store's {@code leaky_bucket.lua} keeps the same
 * slots, from the same numbers: {@link #maxWaitMicros} and {@link TokenBucket#emissionInterval}.
 */
public final class LeakyBucket extends KeyState {
  /** interval, next; maxWait. */
  private static final long FIELDS = 2 * Heap.REF + 8;

  private final long[] interval;
  private final long[] next;
  private final long maxWait;

  public LeakyBucket(List<Window> windows, long maxWaitMicros) {
    super(windows);
    interval = new long[limits.length];
    next = new long[limits.length];
    for (int i = 0; i < limits.length; i++) {
      interval[i] = TokenBucket.emissionInterval(limits[i], periods[i]);
      next[i] = Long.MIN_VALUE;
    }
    maxWait = maxWaitMicros;
  }

  /** The longest wait of {@code rule}'s items whose windows are {@code windows}, in µs. */
  public static long maxWaitMicros(Rule rule, List<Window> windows) {
    return rule.maxWaitFor(windows).toNanos() / 1000;
  }

  @Override
  void evaluate(long now, long cost, Eval e) {
    long start = now;
    for (long n : next) {
      start = Math.max(start, n);
    }
    e.startMicros = start;
    for (int i = 0; i < limits.length; i++) {
      long over = ahead(next[i], now) - maxWait;
      if (over > 0) {
        e.exceeded[i] = true;
        e.retryMicros[i] = over;
        e.fits = false;
        e.reason = DenyReason.WAIT_EXCEEDS_MAX_WAIT;
      }
    }
  }

  @Override
  public void commit(long now, long cost, Eval e) {
    if (cost == 0) {
      return;
    }
    for (int i = 0; i < limits.length; i++) {
      next[i] = e.startMicros + cost * interval[i];
    }
  }

  /**
   * Each kept window's queue at {@code t0}, rescaled to its new interval. Not clamped to the
   * longest queue an admission can leave: a longer one denies until it has drained to max_wait,
   * and a limit lowered and then restored finds every queued unit again.
   */
  @Override
  void carry(KeyState old, int[] match, long t0) {
    LeakyBucket o = (LeakyBucket) old;
    for (int j = 0; j < match.length; j++) {
      if (match[j] >= 0) {
        long b = rescale(ahead(o.next[match[j]], t0), o.interval[match[j]], interval[j]);
        next[j] = b == 0 ? Long.MIN_VALUE : t0 + b;
      }
    }
  }

  @Override
  long remaining(long now, int i) {
    long queued = ahead(next[i], now);
    if (queued > maxWait) {
      return 0;
    }
    return Math.min(limits[i], (maxWait - queued) / interval[i] + 1);
  }

  @Override
  long resetMicros(long now, int i) {
    return ahead(next[i], now);
  }

  @Override
  public long bytes() {
    return bytes(limits.length);
  }

  /** {@link #bytes()} of a state for {@code windows} windows. */
  public static long bytes(int windows) {
    return baseBytes(FIELDS, windows) + 2 * Heap.longs(windows);
  }
}
