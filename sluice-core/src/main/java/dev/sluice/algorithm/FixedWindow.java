package dev.sluice.algorithm;

import dev.sluice.DenyReason;
import dev.sluice.Window;
import java.util.List;

/**
 * One counter per window, for the window aligned at a multiple of P since the Unix epoch. The
 * Redis store's {@code fixed_window.lua} keeps the same counters and needs no derived numbers.
 */
public final class FixedWindow extends KeyState {
  /** index, count. */
  private static final long FIELDS = 2 * Heap.REF;

  private final long[] index;
  private final long[] count;

  public FixedWindow(List<Window> windows) {
    super(windows);
    index = new long[limits.length];
    count = new long[limits.length];
  }

  private long current(long now, int i) {
    return Counters.count(index, count, i, Math.floorDiv(now, periods[i]));
  }

  @Override
  void evaluate(long now, long cost, Eval e) {
    for (int i = 0; i < limits.length; i++) {
      if (current(now, i) + cost > limits[i]) {
        e.exceeded[i] = true;
        e.retryMicros[i] = (Math.floorDiv(now, periods[i]) + 1) * periods[i] - now;
        e.fits = false;
        e.reason = DenyReason.LIMIT_EXCEEDED;
      }
    }
  }

  @Override
  public void commit(long now, long cost, Eval e) {
    for (int i = 0; i < limits.length; i++) {
      Counters.add(index, count, i, Math.floorDiv(now, periods[i]), cost);
    }
  }

  /** The units come off every window still the one the commit counted in (undo: its time). */
  @Override
  public void refund(long units, Object undo) {
    long t = (Long) undo;
    for (int i = 0; i < limits.length; i++) {
      long w = Math.floorDiv(t, periods[i]);
      if (Math.floorDiv(lastSeen, periods[i]) == w && index[i] == w) {
        count[i] = Math.max(0, count[i] - units);
      }
    }
  }

  @Override
  void carry(KeyState old, int[] match, long t0) {
    FixedWindow o = (FixedWindow) old;
    for (int j = 0; j < match.length; j++) {
      if (match[j] >= 0) {
        index[j] = o.index[match[j]];
        count[j] = o.count[match[j]];
      }
    }
  }

  @Override
  long remaining(long now, int i) {
    // A count carried from a larger limit may be above this one.
    return Math.max(0, limits[i] - current(now, i));
  }

  @Override
  long resetMicros(long now, int i) {
    return current(now, i) == 0 ? 0 : (Math.floorDiv(now, periods[i]) + 1) * periods[i] - now;
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
