package dev.sluice.memory;

import dev.sluice.DenyReason;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.algorithm.AlgorithmTable;
import dev.sluice.algorithm.Eval;
import dev.sluice.algorithm.Heap;
import dev.sluice.algorithm.KeyState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The memory store's keys: a table of states per rule definition, their room in the
 * {@link Budget}, and eviction (sweeps, {@link #cleanUp}). See {@link MemoryStore} for the rules
 * it keeps: when sweeps run, the bounds, the shares, and what a rule whose share is full answers.
 */
final class KeyMap {
  private static final long SWEEP_INTERVAL_MICROS = 1_000_000;
  /** A sweep made for room waits this many times the previous sweep's duration after it ended. */
  private static final long SWEEP_PAUSE_FACTOR = 9;

  /** The states of one rule definition. Replaced wholesale when the rule changes. */
  private static final class Table {
    final Rule rule;
    final ConcurrentHashMap<String, KeyState> keys = new ConcurrentHashMap<>();
    final Budget.Account account;
    /** Removed from {@code tables}: must not be found again through {@code lastTable}. */
    volatile boolean retired;

    Table(Rule rule) {
      this.rule = rule;
      this.account = new Budget.Account(rule.name());
    }
  }

  private final Ticker ticker;
  private final Budget budget;
  private final boolean automaticSweeps;
  /** Swept with the keys: a policy lasts no longer than it holds something. */
  private final Sides sides;
  private final ConcurrentHashMap<String, Table> tables = new ConcurrentHashMap<>();
  /** store_full denials per rule name, kept across changes of a rule's definition. */
  private final ConcurrentHashMap<String, LongAdder> fullDenials = new ConcurrentHashMap<>();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  /**
   * The table of the latest decision. Plain, not volatile: a stale or racy value costs only a
   * lookup, since it is used only after its rule and liveness are checked, and a Table's other
   * fields are final.
   */
  private Table lastTable;
  private volatile long lastSweep;
  /** Ticker time before which no sweep is made for room. */
  private volatile long sweepPausedUntil = Long.MIN_VALUE;

  KeyMap(Ticker ticker, Budget budget, boolean automaticSweeps, Sides sides) {
    this.ticker = ticker;
    this.budget = budget;
    this.automaticSweeps = automaticSweeps;
    this.sides = sides;
    this.lastSweep = ticker.nowMicros();
  }

  private Table table(Rule rule) {
    // Most decisions name the rule of the one before: one reference comparison instead of a lookup.
    Table t = lastTable;
    if (t != null && t.rule == rule && !t.retired) {
      return t;
    }
    t = tables.get(rule.name());
    if (t == null || (t.rule != rule && !t.rule.equals(rule))) {
      t = tables.compute(rule.name(), (name, old) -> {
        if (old != null && old.rule.equals(rule)) {
          return old;
        }
        if (old != null) {
          retire(old);
        }
        Table fresh = new Table(rule);
        budget.open(fresh.account);
        return fresh;
      });
    }
    if (lastTable != t) {
      lastTable = t;
    }
    return t;
  }

  /** Forgets a table that a rule change replaced or removed, and gives back all it held. */
  private void retire(Table t) {
    t.retired = true;
    budget.close(t.account);
  }

  /** The heap bytes of a held key besides its state: its string and its map entry. */
  static long keyBytes(String key) {
    return Heap.MAP_ENTRY + Heap.string(key);
  }

  /**
   * The state of {@code key}, created if absent with {@code windows} (the key's windows under the
   * rule when null); null when there is no room for it at {@code now}. A held state may count by
   * other windows than {@code windows} (a live limit set or removed): deciders then decide on its
   * view ({@link Decisions}).
   */
  KeyState state(Rule rule, String key, List<Window> windows, long now) {
    while (true) {
      Table t = table(rule);
      KeyState s = t.keys.get(key);
      if (s != null) {
        return s;
      }
      List<Window> ws = windows != null ? windows : rule.windowsFor(key);
      AlgorithmTable algorithm = AlgorithmTable.of(rule.algorithm());
      long bytes = keyBytes(key) + algorithm.newStateBytes(rule, ws);
      Budget.Refusal r = budget.reserve(t.account, 1, bytes);
      if (r == Budget.Refusal.POOL || r == Budget.Refusal.STORE) {
        if (sweepMayMakeRoom(t.account, r, now)) {
          cleanUp(now);
          r = budget.reserve(t.account, 1, bytes);
        }
      }
      if (r == Budget.Refusal.RETIRED) {
        continue; // a rule change replaced the table: look it up again
      }
      if (r != null) {
        return null;
      }
      KeyState created = algorithm.newState(rule, ws);
      created.account = t.account;
      KeyState prior = t.keys.putIfAbsent(key, created);
      if (prior != null) {
        budget.release(t.account, 1, bytes);
        return prior;
      }
      return created;
    }
  }

  /**
   * Stores {@code v}, a view of {@code s} that admitted (nothing when it is {@code s} itself), in
   * {@code s}'s place, under {@code s}'s lock, like an eviction: {@code s} is marked dead, so a
   * decider that found it looks the key up again and finds {@code v}. The bytes {@code v} adds
   * were reserved by {@link #room}; those it frees are given back here. The last step of a
   * decision that reads {@code v}: from here on other deciders may change it.
   */
  void publish(Rule rule, String key, KeyState s, KeyState v) {
    if (v == s) {
      return;
    }
    long growth = v.bytes() - s.bytes();
    if (growth < 0) {
      budget.release(account(s), 0, -growth);
    }
    // Other windows may empty sooner: the bound of when a held key becomes idle must not lag.
    budget.idleAt(account(v), v.idleAt(v.lastSeen));
    s.dead = true;
    table(rule).keys.replace(key, s, v);
  }

  /** Gives back what {@link #room} reserved for a view of {@code s} that was not stored after all. */
  void discard(KeyState s, KeyState v) {
    long growth = v.bytes() - s.bytes();
    if (v != s && growth > 0) {
      budget.release(account(s), 0, growth);
    }
  }

  /** Whether a held key may have become idle, and a sweep for room may run now. */
  private boolean sweepMayMakeRoom(Budget.Account a, Budget.Refusal why, long now) {
    return budget.roomAt(a, why) <= now && ticker.nowMicros() >= sweepPausedUntil;
  }

  /**
   * How long a new key of {@code rule} found without room at {@code now} should wait, in
   * microseconds, from what the budget says now; -1 if it can never fit.
   */
  long fullRetryMicros(Rule rule, String key, List<Window> windows, long now) {
    Table t = table(rule);
    long bytes = keyBytes(key)
        + AlgorithmTable.of(rule.algorithm()).newStateBytes(rule, windows != null ? windows : rule.windowsFor(key));
    return retryMicros(t.account, budget.check(t.account, 1, bytes), now);
  }

  private long retryMicros(Budget.Account a, Budget.Refusal why, long now) {
    if (why == Budget.Refusal.NEVER) {
      return -1;
    }
    if (why == null || why == Budget.Refusal.RETIRED) {
      return 1; // room now (it was freed meanwhile): retrying at once may succeed
    }
    long at = budget.roomAt(a, why);
    if (at == Long.MAX_VALUE) {
      // No held key has been decided yet (they are being created): it is a matter of moments.
      at = budget.all.get() == Long.MAX_VALUE ? now : budget.all.get();
    }
    return Math.max(1, Math.max(at - now, KeyState.ahead(sweepPausedUntil, ticker.nowMicros())));
  }

  /**
   * Makes room in {@code s} for committing {@code cost} at {@code now} if it must grow, and, when
   * {@code s} is a view of {@code stored} for other windows, for storing it in its place; if the
   * budget has no room, marks {@code e} as denied {@code store_full} and answers false (a view
   * larger than its rule's share has room for keeps the key on its old windows until there is
   * room). Called with {@code stored} locked, so it never sweeps (a sweep locks every key).
   */
  boolean room(KeyState stored, KeyState s, long now, long cost, Eval e) {
    long growth = s.growthFor(now, cost);
    long need = s == stored ? growth : growth + s.bytes() - stored.bytes();
    if (need <= 0) {
      if (growth > 0) {
        s.grow(now, cost); // a view smaller than the stored state, even grown: publish gives back the difference
      }
      return true;
    }
    Budget.Account account = account(s);
    Budget.Refusal r = budget.reserve(account, 0, need);
    if (r == null || r == Budget.Refusal.RETIRED) {
      // RETIRED: a state of a table a rule change just retired, used once more; nothing counts it.
      if (growth > 0) {
        s.grow(now, cost);
      }
      return true;
    }
    long retry = retryMicros(account, r, now);
    long noGrowth = s.noGrowthAt(now, cost);
    if (noGrowth != Long.MAX_VALUE && (retry < 0 || noGrowth - now < retry)) {
      retry = Math.max(1, noGrowth - now);
    }
    markFull(e, retry);
    countFull(account.rule);
    return false;
  }

  private static void markFull(Eval e, long retryMicros) {
    e.fits = false;
    e.reason = DenyReason.STORE_FULL;
    for (int i = 0; i < e.exceeded.length; i++) {
      e.exceeded[i] = true;
      e.retryMicros[i] = retryMicros;
    }
  }

  void countFull(String rule) {
    LongAdder n = fullDenials.get(rule);
    if (n == null) {
      n = fullDenials.computeIfAbsent(rule, r -> new LongAdder());
    }
    n.increment();
  }

  long fullDenials(String rule) {
    LongAdder n = fullDenials.get(rule);
    return n == null ? 0 : n.sum();
  }

  /** Records, for store_full answers, when a state decided for the first time becomes idle. */
  void firstDecided(KeyState s, long now) {
    budget.idleAt(account(s), s.idleAt(now));
  }

  /** Where {@code s}'s bytes are counted: its table's account, set when it was created. */
  private static Budget.Account account(KeyState s) {
    return (Budget.Account) s.account;
  }

  /** Sweeps now and then: on about one decision in 1024, at most once a second. */
  void maybeSweep(long now) {
    if (!automaticSweeps || (ThreadLocalRandom.current().nextInt() & 1023) != 0) {
      return;
    }
    // A time before the last sweep means a clock behind the one that swept (a replay); sweep on it.
    long last = lastSweep;
    if (now < last || now - last >= SWEEP_INTERVAL_MICROS) {
      cleanUp(now);
    }
  }

  /** Drops every key whose windows are all empty at {@code nowMicros}; see {@link MemoryStore#cleanUp()}. */
  void cleanUp(long nowMicros) {
    if (!sweeping.compareAndSet(false, true)) {
      return;
    }
    long started = ticker.nowMicros();
    try {
      // The bounds are restarted before the tables are listed: a key first decided from here on
      // lowers them again, and every key decided before is in a listed table.
      budget.all.sweepStarts();
      budget.borrowers.sweepStarts();
      List<Table> swept = new ArrayList<>(tables.values());
      for (Table t : swept) {
        t.account.idle.sweepStarts();
      }
      long all = Long.MAX_VALUE;
      long borrowing = Long.MAX_VALUE;
      for (Table t : swept) {
        long earliest = sweep(t, nowMicros);
        all = Math.min(all, earliest);
        if (t.account.borrowing) {
          borrowing = Math.min(borrowing, earliest);
        }
      }
      budget.all.sweepEnds(all);
      budget.borrowers.sweepEnds(borrowing);
      sides.sweep(nowMicros);
      lastSweep = nowMicros;
    } finally {
      long ended = ticker.nowMicros();
      // Sweeps for room take at most about a tenth of one thread's time, however full the store.
      sweepPausedUntil = ended + SWEEP_PAUSE_FACTOR * Math.max(0, ended - started);
      sweeping.set(false);
    }
  }

  /** Drops {@code t}'s idle keys; answers when the earliest key it keeps becomes idle. */
  private long sweep(Table t, long nowMicros) {
    long removedKeys = 0;
    long removedBytes = 0;
    long earliest = Long.MAX_VALUE;
    for (Map.Entry<String, KeyState> en : t.keys.entrySet()) {
      KeyState s = en.getValue();
      s.lock();
      try {
        // A state not decided yet is being created by a request that decides it next (and
        // records when it becomes idle): taking it away would only make that request create
        // it again, after another request may have taken its room.
        if (s.dead || s.lastSeen == Long.MIN_VALUE) {
          continue;
        }
        if (s.idle(Math.max(nowMicros, s.lastSeen))) {
          s.dead = true;
          if (t.keys.remove(en.getKey(), s)) {
            removedKeys++;
            removedBytes += keyBytes(en.getKey()) + s.bytes();
          }
        } else {
          earliest = Math.min(earliest, s.idleAt(nowMicros));
        }
      } finally {
        s.unlock();
      }
    }
    if (removedKeys > 0) {
      budget.release(t.account, removedKeys, removedBytes);
    }
    t.account.idle.sweepEnds(earliest);
    return earliest;
  }

  /** Forgets {@code key}'s state under the rule named {@code rule}. */
  void reset(String rule, String key) {
    Table t = tables.get(rule);
    KeyState s = t == null ? null : t.keys.get(key);
    if (s == null) {
      return;
    }
    long bytes = 0;
    s.lock();
    try {
      if (!s.dead) {
        s.dead = true;
        if (t.keys.remove(key, s)) {
          bytes = keyBytes(key) + s.bytes();
        }
      }
    } finally {
      s.unlock();
    }
    if (bytes > 0) {
      budget.release(t.account, 1, bytes);
    }
  }

  /** Retires the tables of rules that changed or disappeared. */
  void rulesChanged(RuleSet after) {
    for (Table t : tables.values()) {
      Rule now = after.get(t.rule.name());
      if (now == null || !now.equals(t.rule)) {
        if (tables.remove(t.rule.name(), t)) {
          retire(t);
        }
      }
    }
    fullDenials.keySet().removeIf(name -> after.get(name) == null);
  }

  /** The state held for {@code key} under the rule named {@code rule}, or null. */
  KeyState held(String rule, String key) {
    Table t = tables.get(rule);
    return t == null ? null : t.keys.get(key);
  }

  /** Keys and bytes of every held state, counted afresh by walking the tables; for tests. */
  long[] recount() {
    long keys = 0;
    long bytes = 0;
    for (Table t : tables.values()) {
      for (Map.Entry<String, KeyState> en : t.keys.entrySet()) {
        keys++;
        bytes += keyBytes(en.getKey()) + en.getValue().bytes();
      }
    }
    return new long[] {keys, bytes};
  }

  long keys(String rule) {
    Table t = tables.get(rule);
    return t == null ? 0 : t.account.keys;
  }

  long bytes(String rule) {
    Table t = tables.get(rule);
    return t == null ? 0 : t.account.bytes;
  }

  void close() {
    tables.values().forEach(t -> t.retired = true);
    tables.clear();
  }
}
