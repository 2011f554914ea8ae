package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.ResolvedItem;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The state of one (rule, key) in the memory store: the algorithm's per-window counters. Each
 * algorithm is one subclass. The Redis store loads the value it keeps for a key into one and
 * reports on it here too ({@link #reportStored}), so that both stores' reports come from one
 * piece of code.
 *
 * <p>Guarded by its own lock ({@link #lock()}); a request locks the states of all its items in
 * {@link #order} to avoid deadlock. A state removed by eviction is marked {@link #dead} under its lock, and a decider
 * that finds it dead after locking looks the key up again, so no update is ever applied to a
 * discarded state.
 *
 * <p>The lock is a version, even when free and odd when held: locking moves it from even to odd
 * by compare-and-swap, unlocking to the next even number by a release store. That is one atomic
 * instruction per decision where a monitor takes two (on JDKs without biased locking), which is
 * a tenth of a one-key decision. It is held for a decision's arithmetic only, never across I/O or
 * a callback, so a waiter spins briefly, then yields, then sleeps in short steps. It is not
 * reentrant. Because every change of the state happens between two versions, a reader can also
 * go without the lock (a sequence lock): {@link #deniesWithoutLock} reads the state racily and
 * trusts what it read only if the version was even before and unchanged after. Both are checked
 * by Lincheck's model checker in {@code SequenceLockModelCheckTest}.
 *
 * <p>Time is microseconds. It never goes backwards for one key: an earlier {@code now} than one
 * already seen is treated as the latest seen (explicit times in tests, clocks of failed-over
 * Redis servers).
 */
public abstract class KeyState {
  private static final AtomicLong SEQUENCE = new AtomicLong();
  private static final VarHandle VERSION;
  /** This class's fields: four longs, five references, two booleans. */
  private static final long FIELDS = 4 * 8 + 5 * Heap.REF + 2;

  static {
    try {
      VERSION = MethodHandles.lookup().findVarHandle(KeyState.class, "version", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** {@link #readScratch}'s: evaluations index it by window, so a longer one serves fewer windows too. */
  private static final ThreadLocal<Eval.Reads> READ_SCRATCH = ThreadLocal.withInitial(() -> new Eval.Reads(2));

  /** Even: free; odd: held. A long, so that it cannot wrap around during one racy read. */
  @SuppressWarnings("unused") // through VERSION
  private volatile long version;

  public final long order = SEQUENCE.getAndIncrement();
  /** The windows this state counts by: the key's windows when it was made (or carried to). */
  private final List<Window> windowList;
  final long[] limits;
  final long[] periods;
  final long longestPeriod;
  /** Removed from the store (under the lock): a decider that finds it so looks the key up again. */
  public boolean dead;
  /** The latest time this key has seen; {@link Long#MIN_VALUE} before its first decision. */
  public long lastSeen = Long.MIN_VALUE;
  /**
   * Whether the latest one-item decision on this key made under the lock was a denial: a hint, read without the lock, that the next one is likely a denial too and
   * worth trying without the lock. A stale value costs only time.
   */
  public boolean denying;
  private final Eval scratch;
  /**
   * Where the memory store counts this state's bytes (its {@code Budget.Account}); set before the
   * state is published. Typed loosely so that this package does not depend on the store's.
   */
  public Object account;

  KeyState(List<Window> windows) {
    windowList = windows;
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
    scratch = new Eval(n);
  }

  /**
   * Whether this state counts by {@code windows}: on the hot path the same list object, compared
   * by reference before its elements.
   */
  public final boolean countsBy(List<Window> windows) {
    return windows == windowList || windows.equals(windowList);
  }

  /**
   * Takes over {@code old}'s consumption, {@code old} being a state of the same rule definition
   * (so of this class, and the same precision) for other windows; called under {@code old}'s
   * lock, before this state is published (which only an admission on it does: a decision that
   * consumes nothing leaves {@code old} as the key's state). Windows are matched by period: a window of this state
   * whose period {@code old} has inherits that window's consumption as it stood at the key's
   * latest decision; a window with a new period starts empty (the log of {@code sliding_log},
   * shared by every window, is kept as a whole: see {@link SlidingLog#carry}). The latest time
   * seen carries too.
   */
  public final void carryFrom(KeyState old) {
    lastSeen = old.lastSeen;
    account = old.account;
    if (lastSeen == Long.MIN_VALUE) {
      return;
    }
    int[] match = new int[limits.length];
    for (int j = 0; j < match.length; j++) {
      match[j] = -1;
      for (int i = 0; i < old.periods.length; i++) {
        if (old.periods[i] == periods[j]) {
          match[j] = i;
          break;
        }
      }
    }
    carry(old, match, lastSeen);
  }

  /**
   * {@link #carryFrom}'s algorithm part: window j takes over window {@code match[j]} of
   * {@code old} (-1: none), as of {@code t0}, the key's latest time. Every algorithm overrides
   * it; the default keeps nothing.
   */
  void carry(KeyState old, int[] match, long t0) {}

  /**
   * The furthest a carried schedule reaches ahead of the key's latest time, in µs (2^50, about 35
   * years, the longest period the Redis store takes): sums with times stay exact in the Redis
   * script's doubles and far from overflowing here.
   */
  public static final long MAX_BACKLOG = 1L << 50;

  /**
   * The backlog {@code b} µs of a schedule with emission interval {@code from}, rescaled to
   * interval {@code to}: kept in whole units (a unit partly refilled counts as consumed), however
   * many the new limit allows, so that a limit lowered and restored finds every unit again; at
   * most {@link #MAX_BACKLOG}. The same arithmetic as {@code carry.lua}'s, exact in its doubles.
   */
  static long rescale(long b, long from, long to) {
    if (b <= 0) {
      return 0;
    }
    long units = (b + from - 1) / from;
    return units > MAX_BACKLOG / to ? MAX_BACKLOG : Math.min(MAX_BACKLOG, units * to);
  }

  /**
   * Evaluates {@code cost} at {@code now} into this state's scratch space, which stays valid
   * until the next evaluation: callers hold the lock from here until the report is built.
   */
  public final Eval evaluate(long now, long cost) {
    Eval e = scratch.reset(limits.length);
    e.fits = true;
    e.startMicros = now;
    if (!costTooLarge(cost, e)) {
      evaluate(now, cost, e);
    }
    return e;
  }

  public final void lock() {
    long v = (long) VERSION.getOpaque(this);
    if ((v & 1) != 0 || !VERSION.compareAndSet(this, v, v + 1)) {
      lockContended();
    }
  }

  private void lockContended() {
    for (int attempt = 1; ; attempt++) {
      long v = (long) VERSION.getOpaque(this);
      if ((v & 1) == 0 && VERSION.compareAndSet(this, v, v + 1)) {
        return;
      }
      if (attempt < 64) {
        Thread.onSpinWait();
      } else if (attempt < 128) {
        Thread.yield(); // the holder may have been preempted: let it run
      } else {
        LockSupport.parkNanos(this, 10_000);
      }
    }
  }

  public final void unlock() {
    // Only the holder writes the version while it is odd.
    VERSION.setRelease(this, (long) VERSION.get(this) + 1);
  }

  /** The lock's version: it moves on every locking and unlocking. */
  public final long version() {
    return (long) VERSION.getAcquire(this);
  }

  /**
   * Whether {@code cost} certainly does not fit at {@code now}, found without the lock and
   * without writing anything; false when it fits, when the state is held, dead or being changed,
   * or when {@code now} is before the latest time this key has seen (the locked path clamps it).
   * A true answer was read from one consistent state: the version was even before the reads and
   * unchanged after them, so no decision committed in between.
   */
  public final boolean deniesWithoutLock(long now, long cost) {
    long v = (long) VERSION.getAcquire(this);
    if ((v & 1) != 0 || dead || now < lastSeen) {
      return false;
    }
    boolean denied = deniedRacy(now, cost);
    VarHandle.acquireFence(); // the reads above happen before the version's second read
    return denied && (long) VERSION.getOpaque(this) == v;
  }

  /**
   * The report of a denial of {@code item} at {@code now} (the store's clock), found without the
   * lock and without writing anything, as {@link #deniesWithoutLock} finds a denial: null when the
   * item fits, when the state is held, dead or being changed, or when {@code now} is before the
   * latest time this key has seen. The evaluation and every window's numbers are read racily, into
   * scratch space of this thread's own, and trusted only if the version was even before the first
   * read and unchanged after the last, so the report is that of one consistent state: the one the
   * locked decision would have reported at {@code now}. Anything a torn read throws means "cannot
   * tell" too.
   */
  public final ItemDecision denialWithoutLock(ResolvedItem item, long now) {
    long v = (long) VERSION.getAcquire(this);
    if ((v & 1) != 0 || dead || now < lastSeen) {
      return null;
    }
    ItemDecision d;
    try {
      Eval e = deniedEval(item.cost(), now);
      if (e == null) {
        return null;
      }
      d = decision(item, now, e);
    } catch (RuntimeException torn) {
      return null;
    }
    VarHandle.acquireFence(); // the reads above happen before the version's second read
    return (long) VERSION.getOpaque(this) == v ? d : null;
  }

  /**
   * {@link #denialWithoutLock} as the decision of a request of {@code cost} units alone, which a
   * key denied again and again answers many times a millisecond with the same numbers. This
   * thread remembers the last such decision it answered ({@link Eval.Reads#alone}) and answers it
   * again, the same immutable object, so that a repeated denial allocates nothing:
   * <ul>
   *   <li>without evaluating, when it is of this state at the same version (nothing decided under
   *       the lock since), for the same cost, at a time before any of its whole milliseconds would
   *       move ({@link Eval.Reads#until}), with the same units remaining in every window, and the
   *       algorithm's own racy check still denies. With the state unchanged, time only frees
   *       windows, and their retry and reset times fall one for one with it, so nothing else in
   *       the decision can differ;
   *   <li>else when the evaluation gives every field of it again;
   *   <li>else a new one is built, and remembered.
   * </ul>
   */
  public final Decision denialAloneWithoutLock(Rule rule, String key, long cost, long now) {
    long v = (long) VERSION.getAcquire(this);
    if ((v & 1) != 0 || dead || now < lastSeen) {
      return null;
    }
    Eval.Reads e = READ_SCRATCH.get();
    Decision d = e.alone;
    boolean again;
    try {
      again = d != null && e.state == this && e.version == v && e.cost == cost && now >= e.from && now < e.until
          && d.items().get(0).shadow() == rule.shadow() && deniedRacy(now, cost) && sameRemaining(d, now);
      if (!again) {
        e = deniedEval(cost, now);
        if (e == null) {
          return null;
        }
        if (d == null || !reports(d.items().get(0), rule, key, cost, now, e)) {
          d = Decision.of(List.of(decision(rule, key, cost, now, e)), false);
        }
      }
    } catch (RuntimeException torn) {
      return null;
    }
    VarHandle.acquireFence(); // the reads above happen before the version's second read
    if ((long) VERSION.getOpaque(this) != v) {
      return null;
    }
    if (!again) {
      e.remember(d, this, v, cost, now, stableUntil(now, e));
    }
    return d;
  }

  /** Whether every window of {@code d} has as many units remaining at {@code now} as this state. */
  private boolean sameRemaining(Decision d, long now) {
    List<WindowState> ws = d.items().get(0).windows();
    for (int i = 0; i < limits.length; i++) {
      if (ws.get(i).remaining() != remaining(now, i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The first time after {@code now} at which a whole millisecond of a decision evaluated as
   * {@code e} would move: a retry or reset time, falling one for one with time on an unchanged
   * state, reaching the next lower millisecond (a retry reaching 0 is a window freed).
   */
  private long stableUntil(long now, Eval e) {
    long until = Long.MAX_VALUE;
    for (int i = 0; i < limits.length; i++) {
      if (e.exceeded[i] && e.retryMicros[i] > 0) {
        until = Math.min(until, nextMillisecond(now, e.retryMicros[i]));
      }
      long reset = resetMicros(now, i);
      if (reset > 0) {
        until = Math.min(until, nextMillisecond(now, reset));
      }
    }
    return until;
  }

  /** When {@code micros} from {@code now}, falling with time, is one whole millisecond less (rounded up). */
  private static long nextMillisecond(long now, long micros) {
    return now + micros - 1000 * (ceilMillis(micros) - 1);
  }

  /**
   * This thread's scratch space evaluated for {@code cost} at {@code now}, read racily; null when
   * the cost fits, or when the algorithm has no racy check (such algorithms always take the lock).
   */
  private Eval.Reads deniedEval(long cost, long now) {
    if (!deniedRacy(now, cost)) {
      return null;
    }
    Eval.Reads e = readScratch();
    e.fits = true;
    e.startMicros = now;
    if (!costTooLarge(cost, e)) {
      evaluate(now, cost, e);
    }
    return e.fits ? null : e;
  }

  /**
   * Whether {@code d} is exactly the denial of {@code cost} units of {@code rule} for {@code key}
   * that {@link #decision} would build from {@code e} at {@code now}.
   */
  private boolean reports(ItemDecision d, Rule rule, String key, long cost, long now, Eval e) {
    List<WindowState> ws = d.windows();
    if (d.cost() != cost || d.reason() != e.reason || d.shadow() != rule.shadow() || ws.size() != limits.length
        || !d.key().equals(key) || !d.rule().equals(rule.name())) {
      return false;
    }
    for (int i = 0; i < limits.length; i++) {
      WindowState w = ws.get(i);
      if (w.exceeded() != e.exceeded[i] || w.limit() != limits[i] || w.periodMs() != periods[i] / 1000
          || w.retryAfterMs() != retryMillis(i, e) || w.remaining() != remaining(now, i)
          || w.resetAfterMs() != ceilMillis(resetMicros(now, i))) {
        return false;
      }
    }
    return true;
  }

  /**
   * This thread's scratch space for {@link #denialWithoutLock}, reset, with room for this state's
   * windows: the state's own belongs to the lock holder, and a new one per read would be most of
   * what the read allocates besides its report.
   */
  private Eval.Reads readScratch() {
    Eval.Reads e = READ_SCRATCH.get();
    if (e.room < limits.length) {
      e = new Eval.Reads(limits.length);
      READ_SCRATCH.set(e);
    }
    e.reset(limits.length);
    return e;
  }

  /**
   * The decision on {@code item} evaluated as {@code e} at {@code now} on this state: whether it
   * fits, why not, how long it waits (shaping), and every window's numbers.
   */
  public final ItemDecision decision(ResolvedItem item, long now, Eval e) {
    return decision(item.rule(), item.key(), item.cost(), now, e);
  }

  private ItemDecision decision(Rule rule, String key, long cost, long now, Eval e) {
    long wait = e.fits ? ceilMillis(e.startMicros - now) : 0;
    return new ItemDecision(rule.name(), key, cost, e.fits, e.reason, wait, windowStates(now, e), rule.shadow());
  }

  /** Immutable already, so the decision keeps it without another copy; no array for 1 or 2 windows. */
  private List<WindowState> windowStates(long now, Eval e) {
    int w = limits.length;
    if (w == 1) {
      return List.of(report(now, 0, e));
    }
    if (w == 2) {
      return List.of(report(now, 0, e), report(now, 1, e));
    }
    WindowState[] ws = new WindowState[w];
    for (int i = 0; i < w; i++) {
      ws[i] = report(now, i, e);
    }
    return List.of(ws);
  }

  /**
   * Whether {@code cost} does not fit at {@code now}, read without the lock, so possibly from a
   * torn state: it must not throw or loop on any mix of old and new fields, and its answer is
   * used only if the version shows no change. False means "fits, or cannot tell" (the default:
   * such algorithms always take the lock). Uses no scratch space: the lock holder may be using it.
   */
  boolean deniedRacy(long now, long cost) {
    return false;
  }

  public final int windows() {
    return limits.length;
  }

  public final long clamp(long now) {
    if (now < lastSeen) {
      return lastSeen;
    }
    lastSeen = now;
    return now;
  }

  /**
   * Whether {@code cost} fits now in every window; fills {@code e} with each window's verdict and
   * time until the cost would fit. Changes nothing. {@code e} arrives saying "fits, starting now",
   * and {@code cost} is within every window's limit (a larger one was denied before).
   */
  abstract void evaluate(long now, long cost, Eval e);

  /**
   * The most whole units, up to {@code units}, that fit every window at {@code now}: what a take
   * of leased mode commits. Each leasable algorithm's {@link #remaining} is exactly the largest
   * cost its evaluation admits; the evaluation has the last word all the same (a binary search
   * below the remaining if it disagreed), so a take never commits what a decision would deny.
   * Leaves this state's scratch space evaluated for the answer (or for one unit when it is 0).
   */
  public final long fit(long now, long units) {
    long g = units;
    for (int i = 0; i < limits.length; i++) {
      g = Math.min(g, remaining(now, i));
    }
    if (g > 0 && !evaluate(now, g).fits) {
      long lo = 0;
      long hi = g - 1;
      while (lo < hi) {
        long mid = (lo + hi + 1) >>> 1;
        if (evaluate(now, mid).fits) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      g = lo;
    }
    g = Math.max(0, g);
    evaluate(now, Math.max(1, g));
    return g;
  }

  /**
   * What {@link #refund} needs to take back a commit of {@code cost} at {@code now}; called under
   * the lock after the room for it was made and before {@link #commit}.
   */
  public Object undoFor(long now, long cost) {
    return now;
  }

  /**
   * Takes back {@code units} of a commit described by {@code undo} ({@link #undoFor}), as the Redis
   * store's refund of the same algorithm does: as far as the state still holds them, judged on
   * the key's latest time (a give-back is not a decision and moves no clock). Called under the
   * lock, on a state counting by the commit's windows.
   *
   * @throws UnsupportedOperationException for an algorithm whose units cannot be given back (the
   *     default: leaky_bucket, which leased mode refuses)
   */
  public void refund(long units, Object undo) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " units are not given back");
  }

  /** Consumes {@code cost} at {@code now}; called only after {@link #evaluate} said it fits. */
  public abstract void commit(long now, long cost, Eval e);

  /** Whole units still available in window {@code i} now. */
  abstract long remaining(long now, int i);

  /** Microseconds until window {@code i} is back to its full limit. */
  abstract long resetMicros(long now, int i);

  /**
   * Whether every window is empty at {@code now}, so the state can be forgotten: none has
   * anything left to reset.
   */
  public boolean idle(long now) {
    for (int i = 0; i < limits.length; i++) {
      if (resetMicros(now, i) > 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * When this state becomes idle if no further units are admitted: {@code now} if it is idle
   * already. It never moves earlier as units are admitted, so a time read once is a lower bound
   * for good.
   */
  public final long idleAt(long now) {
    long t = Math.max(now, lastSeen);
    long latest = 0;
    for (int i = 0; i < limits.length; i++) {
      latest = Math.max(latest, resetMicros(t, i));
    }
    return t + latest;
  }

  /**
   * The heap bytes a commit of {@code cost} at {@code now} would add to this state (a log that
   * must grow); 0 for states of fixed size. Called under the lock, after {@link #evaluate} said
   * it fits and before {@link #commit}.
   */
  public long growthFor(long now, long cost) {
    return 0;
  }

  /** Makes the room {@link #growthFor} counted, once the store has granted those bytes. */
  public void grow(long now, long cost) {}

  /**
   * When a commit of {@code cost} would no longer need {@link #growthFor} bytes if no other units
   * were admitted meanwhile; {@link Long#MAX_VALUE} if never.
   */
  public long noGrowthAt(long now, long cost) {
    return Long.MAX_VALUE;
  }

  /** The heap bytes this state holds: the object, its arrays and its scratch space. */
  public abstract long bytes();

  /**
   * The heap bytes of a state with {@code w} windows whose class adds {@code subclassFields}
   * bytes of fields, without the subclass's arrays: the object, its limits and periods, its
   * scratch space.
   */
  static long baseBytes(long subclassFields, int w) {
    return Heap.object(FIELDS + subclassFields) + 2 * Heap.longs(w) + Eval.bytes(w);
  }

  /**
   * The report of a decision at {@code now} on this state as read from the Redis store, whose
   * value recorded {@code last} as the key's latest time: the numbers the memory store reports,
   * on the same state at the same time. An admission's value is the one written, so no window is
   * exceeded; a denial's is the one read, evaluated again for each window's verdict and retry.
   */
  public final List<WindowState> reportStored(long last, long now, long cost, boolean allowed) {
    lastSeen = last;
    long t = clamp(now);
    Eval e = allowed ? scratch.reset(limits.length) : evaluate(t, cost);
    WindowState[] out = new WindowState[limits.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = report(t, i, e);
    }
    return List.of(out);
  }

  /** Marks windows whose limit is below {@code cost}: such a cost can never be admitted. */
  private boolean costTooLarge(long cost, Eval e) {
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

  public final WindowState report(long now, int i, Eval e) {
    return new WindowState(limits[i], periods[i] / 1000, remaining(now, i), retryMillis(i, e),
        ceilMillis(resetMicros(now, i)), e.exceeded[i]);
  }

  private static long retryMillis(int i, Eval e) {
    long retry = e.exceeded[i] ? e.retryMicros[i] : 0;
    return retry < 0 ? WindowState.NEVER : ceilMillis(retry);
  }

  /**
   * How far {@code t} lies after {@code now}, 0 if not after. States start their schedules at
   * {@link Long#MIN_VALUE} ("never"), and {@code t - now} would overflow for them.
   */
  public static long ahead(long t, long now) {
    return t > now ? t - now : 0;
  }

  public static long ceilMillis(long micros) {
    return micros <= 0 ? 0 : (micros + 999) / 1000;
  }
}
