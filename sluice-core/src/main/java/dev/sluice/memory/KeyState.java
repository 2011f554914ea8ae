package dev.sluice.memory;

import dev.sluice.DenyReason;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The state of one (rule, key): the algorithm's per-window counters. Guarded by its own monitor;
 * a request locks the states of all its items in {@link #order} to avoid deadlock. A state
 * removed by eviction is marked {@link #dead} under its monitor, and a decider that finds it
 * dead after locking looks the key up again, so no update is ever applied to a discarded state.
 *
 * <p>Time is microseconds. It never goes backwards for one key: an earlier {@code now} than one
 * already seen is treated as the latest seen (explicit times in tests, clocks of failed-over
 * Redis servers).
 */
abstract class KeyState {
  private static final AtomicLong SEQUENCE = new AtomicLong();

  final long order = SEQUENCE.getAndIncrement();
  final long[] limits;
  final long[] periods;
  final long longestPeriod;
  boolean dead;
  long lastSeen = Long.MIN_VALUE;

  KeyState(List<Window> windows) {
    int n = windows.size();
    limits = new long[n];
    periods = new long[n];
    long longest = 0;
    for (int i = 0; i < n; i++) {
      limits[i] = windows.get(i).limit();
      periods[i] = windows.get(i).periodMicros();
      longest = Math.max(longest, periods[i]);
    }
    longestPeriod = longest;
  }

  final int windows() {
    return limits.length;
  }

  final long clamp(long now) {
    if (now < lastSeen) {
      return lastSeen;
    }
    lastSeen = now;
    return now;
  }

  /**
   * Whether {@code cost} fits now in every window; fills {@code e} with each window's verdict and
   * time until the cost would fit. Changes nothing.
   */
  abstract void evaluate(long now, long cost, Eval e);

  /** Consumes {@code cost} at {@code now}; called only after {@link #evaluate} said it fits. */
  abstract void commit(long now, long cost, Eval e);

  /** Whole units still available in window {@code i} now. */
  abstract long remaining(long now, int i);

  /** Microseconds until window {@code i} is back to its full limit. */
  abstract long resetMicros(long now, int i);

  /** Whether every window is empty at {@code now}, so the state can be forgotten. */
  abstract boolean idle(long now);

  /** Marks windows whose limit is below {@code cost}: such a cost can never be admitted. */
  final boolean costTooLarge(long cost, Eval e) {
    boolean any = false;
    for (int i = 0; i < limits.length; i++) {
      if (cost > limits[i]) {
        e.exceeded[i] = true;
        e.retryMicros[i] = -1;
        any = true;
      }
    }
    if (any) {
      e.fits = false;
      e.reason = DenyReason.COST_EXCEEDS_LIMIT;
    }
    return any;
  }

  final WindowState report(long now, int i, Eval e) {
    long retry = e.exceeded[i] ? e.retryMicros[i] : 0;
    return new WindowState(limits[i], periods[i] / 1000, remaining(now, i),
        retry < 0 ? WindowState.NEVER : ceilMillis(retry), ceilMillis(resetMicros(now, i)), e.exceeded[i]);
  }

  /**
   * How far {@code t} lies after {@code now}, 0 if not after. States start their schedules at
   * {@link Long#MIN_VALUE} ("never"), and {@code t - now} would overflow for them.
   */
  static long ahead(long t, long now) {
    return t > now ? t - now : 0;
  }

  static long ceilMillis(long micros) {
    return micros <= 0 ? 0 : (micros + 999) / 1000;
  }
}
