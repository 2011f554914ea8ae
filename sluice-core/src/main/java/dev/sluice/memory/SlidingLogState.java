package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.DenyReason;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import java.util.List;

/**
 * Exact rolling windows from one log of admitted units shared by all windows of the key. The log
 * is a ring of unit timestamps, newest last, holding at most the largest limit: a window (L, P)
 * has room for cost c exactly when its (L−c+1)-th most recent unit is older than now − P, which
 * is one array read. The ring grows with use, so a key costs 8 bytes per unit admitted within
 * its longest window.
 */
final class SlidingLogState extends KeyState {
  private final int capacity;
  private long[] ring;
  private int head; // next write position
  private int size;

  /** The largest limit of a window: the log is one array. */
  static final long MAX_LIMIT = Integer.MAX_VALUE - 8;

  /** @throws UnsupportedRuleException if a window of {@code rule}, or of an override, is beyond {@link #MAX_LIMIT} */
  static void check(Rule rule) {
    if (rule.algorithm() != Algorithm.SLIDING_LOG) {
      return;
    }
    check(rule, null, rule.windows());
    for (KeyOverride o : rule.overrides()) {
      check(rule, o, o.windows());
    }
  }

  private static void check(Rule rule, KeyOverride override, List<Window> windows) {
    for (Window w : windows) {
      if (w.limit() > MAX_LIMIT) {
        throw UnsupportedRuleException.window(rule, override, w, "the memory store's sliding_log supports limits up to "
            + MAX_LIMIT + "; use sliding_window for larger limits");
      }
    }
  }

  SlidingLogState(List<Window> windows) {
    super(windows);
    long max = 0;
    for (long l : limits) {
      max = Math.max(max, l);
    }
    if (max > MAX_LIMIT) {
      throw new IllegalArgumentException("sliding_log supports limits up to " + MAX_LIMIT);
    }
    capacity = (int) max;
    ring = new long[Math.min(capacity, 8)];
  }

  /** The k-th most recent unit's timestamp, 1 ≤ k ≤ size. */
  private long recent(int k) {
    int idx = head - k;
    if (idx < 0) {
      idx += ring.length;
    }
    return ring[idx];
  }

  @Override
  void evaluate(long now, long cost, Eval e) {
    e.fits = true;
    e.startMicros = now;
    if (costTooLarge(cost, e)) {
      return;
    }
    for (int i = 0; i < limits.length; i++) {
      long k = limits[i] - cost + 1; // the unit that must have left the window
      if (k <= size) {
        long ts = recent((int) k);
        long expires = ts + periods[i];
        if (expires > now) {
          e.exceeded[i] = true;
          e.retryMicros[i] = expires - now;
          e.fits = false;
          e.reason = DenyReason.LIMIT_EXCEEDED;
        }
      }
    }
  }

  @Override
  boolean deniedRacy(long now, long cost) {
    // One read of each field: a concurrent grow() may replace the ring after head and size were
    // read, so every index is checked against the array actually read.
    long[] r = ring;
    int h = head;
    int n = size;
    for (int i = 0; i < limits.length; i++) {
      long k = limits[i] - cost + 1;
      if (k <= 0) {
        return true; // cost above the limit: never fits
      }
      if (k <= n) {
        int idx = h - (int) k;
        if (idx < 0) {
          idx += r.length;
        }
        if (idx < 0 || idx >= r.length) {
          return false; // torn: let the lock decide
        }
        if (r[idx] + periods[i] > now) {
          return true;
        }
      }
    }
    return false;
  }

  @Override
  void commit(long now, long cost, Eval e) {
    for (long u = 0; u < cost; u++) {
      // A full ring whose oldest unit has left every window overwrites it instead of growing:
      // that unit can no longer deny or count anything, so memory follows recent use, not all use.
      if (size == ring.length && ring.length < capacity && recent(size) + longestPeriod > now) {
        grow();
      }
      ring[head] = now;
      head = head + 1 == ring.length ? 0 : head + 1;
      if (size < ring.length) {
        size++;
      }
    }
  }

  private void grow() {
    int n = (int) Math.min(capacity, Math.max(8L, (long) ring.length * 2));
    long[] next = new long[n];
    // copy oldest..newest to 0..size-1
    for (int k = size; k >= 1; k--) {
      next[size - k] = recent(k);
    }
    ring = next;
    head = size == n ? 0 : size;
  }

  /** Units admitted in (now − P, now] for window i: binary search over the newest min(size, L). */
  private long inWindow(long now, int i) {
    long floor = now - periods[i];
    int lo = 0;
    int hi = (int) Math.min(size, limits[i]);
    // invariant: the lo most recent are inside; units beyond hi are not counted
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (recent(mid) > floor) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  @Override
  long remaining(long now, int i) {
    return limits[i] - inWindow(now, i);
  }

  @Override
  long resetMicros(long now, int i) {
    if (size == 0) {
      return 0;
    }
    return Math.max(0, recent(1) + periods[i] - now);
  }

  @Override
  boolean idle(long now) {
    return size == 0 || recent(1) + longestPeriod <= now;
  }
}
