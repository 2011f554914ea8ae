package dev.sluice.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.DenyReason;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.util.List;

/**
 * Exact rolling windows from one log of admitted units shared by all windows of the key. The log
 * is a ring of unit timestamps, newest last, holding at most the largest limit: a window (L, P)
 * has room for cost c exactly when its (L−c+1)-th most recent unit is older than now − P, which
 * is one array read. The ring grows with use, so a key costs 8 bytes per unit admitted within
 * its longest window.
 *
 * <p>The Redis store's {@code sliding_log.lua} keeps the same ring in a string, which the store
 * reads into a log {@link #holding} its units to report on it.
 */
public final class SlidingLog extends KeyState {
  /** capacity, head, size; seq; ring. */
  private static final long FIELDS = 3 * 4 + 8 + Heap.REF;
  private static final int INITIAL = 8;

  private final int capacity;
  private long[] ring;
  private int head; // next write position
  private int size;
  /** Units ever committed, less those given back: seq − size were overwritten. */
  private long seq;

  /** The largest limit of a window in the memory store: the log is one array. */
  static final long MAX_LIMIT = Integer.MAX_VALUE - 8;

  /** @throws UnsupportedRuleException if a window of {@code rule}, or of an override, is beyond {@link #MAX_LIMIT} */
  public static void check(Rule rule) {
    if (rule.algorithm() != Algorithm.SLIDING_LOG) {
      return;
    }
    for (Window w : rule.windows()) {
      checkLimit(rule, null, w, MAX_LIMIT, "the memory store's");
    }
    for (KeyOverride o : rule.overrides()) {
      for (Window w : o.windows()) {
        checkLimit(rule, o, w, MAX_LIMIT, "the memory store's");
      }
    }
  }

  /**
   * Refuses window {@code w} of {@code rule} (or of {@code override}) if its limit is beyond
   * {@code max}, the largest log that {@code store} (as in "the memory store's") can hold.
   *
   * @throws UnsupportedRuleException naming the rule, the window and the store's maximum
   */
  public static void checkLimit(Rule rule, KeyOverride override, Window w, long max, String store) {
    if (w.limit() > max) {
      throw UnsupportedRuleException.window(rule, override, w, store + " sliding_log supports limits up to "
          + max + "; use sliding_window for larger limits");
    }
  }

  public SlidingLog(List<Window> windows) {
    super(windows);
    long max = 0;
    for (long l : limits) {
      max = Math.max(max, l);
    }
    if (max > MAX_LIMIT) {
      throw new IllegalArgumentException("sliding_log supports limits up to " + MAX_LIMIT);
    }
    capacity = (int) max;
    ring = new long[Math.min(capacity, INITIAL)];
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
  public void commit(long now, long cost, Eval e) {
    // growthFor/grow made the ring long enough: a full ring's oldest unit has left every window,
    // so overwriting it loses nothing.
    for (long u = 0; u < cost; u++) {
      ring[head] = now;
      head = head + 1 == ring.length ? 0 : head + 1;
      if (size < ring.length) {
        size++;
      }
    }
    seq += cost;
  }

  /**
   * The most units committed since a take that a give-back moves per unit given back: past that
   * the move costs more than the units are worth, and they stay counted until the window forgets
   * them (a false deny at worst). The Redis log's refund has the same bound.
   */
  static final long GIVE_BACK_MOVES = 64;

  /** What {@link #refund} reads: the commit's time and where its block ends; the units it overwrites. */
  record Undo(long t, long seqAfter, long droppedBefore, long[] pushedOut) {}

  @Override
  public Object undoFor(long now, long cost) {
    int pushed = (int) Math.max(0, size + cost - ring.length);
    long[] out = new long[pushed];
    for (int k = 0; k < pushed; k++) {
      out[k] = recent(size - k); // oldest first
    }
    return new Undo(now, seq + cost, seq - size, out);
  }

  /**
   * Takes the newest {@code units} of the commit's block (all stamped with its time) out of the
   * log, as {@code sliding_log_large.lua}'s refund does: units committed since move older to
   * close the gap. Units the commit overwrote lie outside every window (a commit overwrites only
   * such, and windows only move on); when no later commit overwrote others, the newest of them, at
   * most {@code units}, are put back exactly, else none. A block no longer where the undo record
   * says (the key was forgotten or rewritten), or behind more than {@link #GIVE_BACK_MOVES} units
   * per unit given back, is left alone.
   */
  @Override
  public void refund(long units, Object undo) {
    Undo u = (Undo) undo;
    long newer = seq - u.seqAfter();
    if (newer < 0 || newer + units > size || newer > GIVE_BACK_MOVES * units) {
      return;
    }
    for (long k = newer + 1; k <= newer + units; k++) {
      if (recent((int) k) != u.t()) {
        return;
      }
    }
    long drops = (seq - size) - u.droppedBefore();
    int n = size;
    long[] units0 = new long[n]; // oldest first
    for (int k = n; k >= 1; k--) {
      units0[n - k] = recent(k);
    }
    int keep = (int) (n - newer - units);
    long[] fill;
    long[] pushed = u.pushedOut();
    if (drops == pushed.length) {
      int m = (int) Math.min(units, pushed.length);
      fill = java.util.Arrays.copyOfRange(pushed, pushed.length - m, pushed.length);
    } else {
      fill = new long[0];
    }
    int next = fill.length + keep + (int) newer;
    int at = 0;
    for (long f : fill) {
      ring[at++] = f;
    }
    for (int k = 0; k < keep; k++) {
      ring[at++] = units0[k];
    }
    for (int k = 0; k < newer; k++) {
      ring[at++] = units0[(int) (n - newer + k)];
    }
    size = next;
    head = next == ring.length ? 0 : next;
    seq -= units;
  }

  /**
   * The ring length a commit of {@code cost} at {@code now} needs, or 0 if the ring is long
   * enough. The ring holds every unit still inside the longest window; a unit that has left it
   * can no longer deny or count anything and is overwritten, so memory follows recent use, not
   * all use. A ring that must grow at least doubles, so growth is rare.
   */
  private int lengthFor(long now, long cost) {
    int len = ring.length;
    long free = len - size;
    if (len == capacity || cost <= free) {
      return 0;
    }
    long overwritten = cost - free; // the oldest units the commit would overwrite
    if (overwritten <= size && recent((int) (size - overwritten + 1)) + longestPeriod <= now) {
      return 0;
    }
    long need = Math.min(capacity, live(now) + cost);
    return (int) Math.min(capacity, Math.max(need, 2L * len));
  }

  /** Units in the ring still inside the longest window at {@code now}. */
  private int live(long now) {
    return newerThan(now - longestPeriod, size);
  }

  @Override
  public long growthFor(long now, long cost) {
    int n = lengthFor(now, cost);
    return n == 0 ? 0 : Heap.longs(n) - Heap.longs(ring.length);
  }

  @Override
  public void grow(long now, long cost) {
    int n = lengthFor(now, cost);
    if (n == 0) {
      return;
    }
    long[] next = new long[n];
    // copy oldest..newest to 0..size-1
    for (int k = size; k >= 1; k--) {
      next[size - k] = recent(k);
    }
    ring = next;
    head = size == n ? 0 : size;
  }

  @Override
  public long noGrowthAt(long now, long cost) {
    // The ring holds the cost without growing once its (length − cost + 1)-th most recent unit
    // has left the longest window.
    long k = ring.length - cost + 1;
    if (k < 1 || k > size) {
      return k < 1 ? Long.MAX_VALUE : now;
    }
    return recent((int) k) + longestPeriod;
  }

  @Override
  public long bytes() {
    return baseBytes(FIELDS, limits.length) + Heap.longs(ring.length);
  }

  /** {@link #bytes()} of a new state for {@code windows}. */
  public static long bytesFor(List<Window> windows) {
    long max = 0;
    for (Window w : windows) {
      max = Math.max(max, w.limit());
    }
    return baseBytes(FIELDS, windows.size()) + Heap.longs(Math.min(max, INITIAL));
  }

  /** Units admitted in (now − P, now] for window i: binary search over the newest min(size, L). */
  private long inWindow(long now, int i) {
    return newerThan(now - periods[i], (int) Math.min(size, limits[i]));
  }

  /** How many of the {@code most} most recent units are later than {@code floor}: a binary search. */
  private int newerThan(long floor, int most) {
    if (most == 0 || recent(most) > floor) {
      return most; // a key over its limit: every unit counted is inside, one read instead of a search
    }
    int lo = 0;
    int hi = most;
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

  /**
   * The log is one for every window and cannot tell which window a unit counted in, so it is
   * kept as a whole: the units inside the old longest window at {@code t0} (older ones count in
   * no old window and are dropped), the newest of them up to the new largest limit. Every window
   * counts them: a kept window exactly as before, a new one the units the log holds within it.
   */
  @Override
  void carry(KeyState old, int[] match, long t0) {
    SlidingLog o = (SlidingLog) old;
    int kept = (int) Math.min(capacity, o.newerThan(t0 - o.longestPeriod, o.size));
    long[] next = new long[Math.max(ring.length, kept)];
    for (int k = kept; k >= 1; k--) {
      next[kept - k] = o.recent(k);
    }
    ring = next;
    size = kept;
    head = kept == next.length ? 0 : kept;
    seq = o.seq;
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
  public boolean idle(long now) {
    return size == 0 || recent(1) + longestPeriod <= now;
  }

  /**
   * A log of {@code windows} holding {@code units} (unit times, oldest first, at most the largest
   * limit): the state a stored log stands for, which the Redis store reports on as the memory
   * store does ({@link #reportStored}).
   */
  public static SlidingLog holding(List<Window> windows, long[] units) {
    SlidingLog s = new SlidingLog(windows);
    s.ring = units;
    s.head = 0;
    s.size = units.length;
    s.seq = units.length;
    return s;
  }
}
