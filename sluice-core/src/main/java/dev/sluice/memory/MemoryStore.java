package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.algorithm.Eval;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Heap;
import dev.sluice.algorithm.KeyState;
import dev.sluice.algorithm.LeakyBucket;
import dev.sluice.algorithm.SlidingLog;
import dev.sluice.algorithm.SlidingWindow;
import dev.sluice.algorithm.TokenBucket;
import dev.sluice.spi.BanCounts;
import dev.sluice.spi.Batch;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * State in process memory. Each (rule, key) has its own state object and lock, so unrelated
 * keys never contend; a multi-item request locks its items' states in a global order.
 *
 * <p><b>Eviction.</b> A key whose windows are all empty holds no information and is dropped by a
 * sweep. Sweeps run on a caller thread, at most one at a time, when at least a second has passed
 * since the last one (checked on about one decision in 1024), when a new key finds no room and a
 * held key may have become idle (see below), and on {@link #cleanUp()}. Automatic sweeps judge
 * idleness at the time of the decision that triggers them — its explicit time if it has one —
 * because that is the clock its keys are counted on: a replay running behind the ticker must not
 * lose live keys to a sweep on the ticker's time.
 *
 * <p><b>Bounds.</b> The store holds at most {@code maxKeys} keys (default 1,000,000) and
 * {@code maxBytes} bytes of heap (default a quarter of the JVM's maximum heap). A key's bytes are
 * its string, its map entry and its state with the state's arrays; an exact log
 * ({@code sliding_log}) grows with the units its key admits, and its growth is counted too.
 *
 * <p><b>Shares.</b> Each rule in force is guaranteed {@code 1/(2n)} of both caps, n being the
 * number of rules; the other half is a pool that rules beyond their guarantee borrow from, first
 * come, first served. A rule within its guarantee always gets room, so one rule's keys cannot lock
 * another rule out, and a rule alone can use the whole store. The store never forgets a live key
 * to make room (that would let it over-admit): after a rule change, keys borrowed beyond the new
 * shares stay until they are idle. The rules in force are those of {@link #rulesChanged} or
 * {@link #rulesInForce}, plus any rule the store holds keys of.
 *
 * <p><b>When a rule's share is full.</b> A new key of that rule is denied with
 * {@link DenyReason#STORE_FULL}, and nothing else of its request is consumed. Its
 * {@code retryAfterMs} is when room can free up for it: the earliest time a held key whose
 * removal would make room — one of the rule's own keys, or a key of a rule borrowing from the pool
 * (any key when the store as a whole is full) — becomes idle if no more units are admitted. Before
 * then a retry fails; at that time it is decided after a sweep, and succeeds unless other traffic
 * took the room or the key freed was smaller than the new one (then it gets the next such time).
 * A sweep made for room runs at most about a tenth of the time, so the figure may also include the
 * wait for the next such sweep; it is never 0. A key larger than the rule could ever hold is
 * denied with {@link WindowState#NEVER}. Held keys keep deciding exactly: their decisions are the
 * same as in a store with room to spare, except that an exact log that must grow to admit more units and has
 * no room to grow is denied {@code store_full} too, with the earlier of the time above and the
 * time its oldest units leave its longest window (then it has room without growing).
 *
 * <p>Counts of keys and bytes change only when a key is created, grows or is removed; decisions
 * on held keys never touch a shared counter.
 *
 * <p><b>Bans and audit.</b> For a rule with a {@link Rule#ban() ban} policy, a key under a ban is
 * denied {@link DenyReason#BANNED} (its state neither read nor created, nothing of its request
 * consumed), and the denials of the requests the key takes part in count toward the next ban
 * ({@link BanCounts}); an item with an
 * {@linkplain ResolvedItem#audit() audit value} that is consumed records it among the key's last
 * distinct values. That is kept in a side table per rule ({@link KeyPolicy}), counted in the byte
 * budget, dropped by sweeps once over (see docs/policies.md, "Bans and audit in the store").
 * Requests with no such item take the paths above unchanged.
 */
public final class MemoryStore implements Store {
  private static final long SWEEP_INTERVAL_MICROS = 1_000_000;
  /** A sweep made for room waits this many times the previous sweep's duration after it ended. */
  private static final long SWEEP_PAUSE_FACTOR = 9;

  private final Ticker ticker;
  private final Budget budget;
  private final boolean automaticSweeps;
  private final ConcurrentHashMap<String, Table> tables = new ConcurrentHashMap<>();
  /** Bans, counted denials and audit lists by rule name, for rules that ban or audit (see {@link KeyPolicy}). */
  private final ConcurrentHashMap<String, Side> sides = new ConcurrentHashMap<>();
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
  /** Live limits, bans and lists of this store, on its ticker; made by the first {@link #policies()}. */
  private volatile MemoryPolicyStore policies;

  private MemoryStore(Builder b) {
    this.ticker = b.ticker;
    this.budget = new Budget(b.maxKeys, b.maxBytes > 0 ? b.maxBytes : defaultMaxBytes());
    this.automaticSweeps = b.automaticSweeps;
    this.lastSweep = ticker.nowMicros();
  }

  /** The default byte budget: a quarter of the JVM's maximum heap ({@link Runtime#maxMemory()}). */
  public static long defaultMaxBytes() {
    return Math.max(1, Runtime.getRuntime().maxMemory() / 4);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A memory store on the system ticker with default settings. */
  public static MemoryStore create() {
    return builder().build();
  }

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

  /**
   * The {@link KeyPolicy}s of one rule's keys. Unlike a {@link Table} it is kept across changes of
   * the rule's definition (a ban is about the key, not the windows), and dropped with the rule.
   * Its bytes are counted in an account of their own under the rule's name, so they share the
   * rule's guarantee and the pool by the same rules as states do.
   */
  private static final class Side {
    final ConcurrentHashMap<String, KeyPolicy> keys = new ConcurrentHashMap<>();
    final Budget.Account account;

    Side(String rule) {
      this.account = new Budget.Account(rule);
    }
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

  static KeyState newState(Rule rule, List<Window> windows) {
    return switch (rule.algorithm()) {
      case SLIDING_LOG -> new SlidingLog(windows);
      case SLIDING_WINDOW -> new SlidingWindow(windows, rule.precision());
      case FIXED_WINDOW -> new FixedWindow(windows);
      case TOKEN_BUCKET -> new TokenBucket(windows);
      case LEAKY_BUCKET -> new LeakyBucket(windows, LeakyBucket.maxWaitMicros(rule, windows));
    };
  }

  /** The heap bytes of {@link #newState}'s answer. */
  static long newStateBytes(Rule rule, List<Window> windows) {
    return switch (rule.algorithm()) {
      case SLIDING_LOG -> SlidingLog.bytesFor(windows);
      case SLIDING_WINDOW -> SlidingWindow.bytesFor(windows, rule.precision());
      case FIXED_WINDOW -> FixedWindow.bytes(windows.size());
      case TOKEN_BUCKET -> TokenBucket.bytes(windows.size());
      case LEAKY_BUCKET -> LeakyBucket.bytes(windows.size());
    };
  }

  /** The heap bytes of a held key besides its state: its string and its map entry. */
  static long keyBytes(String key) {
    return Heap.MAP_ENTRY + Heap.string(key);
  }

  /**
   * The state of {@code key}, created if absent with {@code windows} (the key's windows under the
   * rule when null); null when there is no room for it at {@code now}. A held state may count by
   * other windows than {@code windows} (a live limit set or removed): deciders then decide on its
   * {@link #view}.
   */
  private KeyState state(Rule rule, String key, List<Window> windows, long now) {
    while (true) {
      Table t = table(rule);
      KeyState s = t.keys.get(key);
      if (s != null) {
        return s;
      }
      List<Window> ws = windows != null ? windows : rule.windowsFor(key);
      long bytes = keyBytes(key) + newStateBytes(rule, ws);
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
      KeyState created = newState(rule, ws);
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
   * What a decision on {@code s}, held under {@code s}'s lock, decides on for windows {@code ws}:
   * {@code s} itself when it counts by them, else a new state for them that carries its
   * consumption ({@link KeyState#carryFrom}), not yet stored. Only an admission stores it
   * ({@link #publish}): a decision that consumes nothing — a peek, a denial — leaves the key as
   * it was, so that windows changed and changed back before any admission find it unchanged, and
   * the carry, made as of the key's latest time, gives the same state whenever it is made.
   */
  private static KeyState view(Rule rule, KeyState s, List<Window> ws) {
    if (s.countsBy(ws)) {
      return s;
    }
    KeyState next = newState(rule, ws);
    next.carryFrom(s);
    return next;
  }

  /**
   * Stores {@code v}, a {@link #view} of {@code s} about to admit, in {@code s}'s place, under
   * {@code s}'s lock, like an eviction: {@code s} is marked dead, so a decider that found it looks
   * the key up again and finds {@code v}. The bytes {@code v} adds were reserved by {@link #room};
   * those it frees are given back here.
   */
  private void publish(Rule rule, String key, KeyState s, KeyState v) {
    if (v == s) {
      return;
    }
    long growth = v.bytes() - s.bytes();
    if (growth < 0) {
      budget.release(account(s), 0, -growth);
    }
    s.dead = true;
    table(rule).keys.replace(key, s, v);
    // Other windows may empty sooner: the bound of when a held key becomes idle must not lag.
    budget.idleAt(account(v), v.idleAt(v.lastSeen));
  }

  /**
   * Ends a decision on {@code v}, a {@link #view} of {@code s} (locked): when {@code admit}, stores
   * it and commits {@code cost}; else, when {@link #room} reserved bytes for it ({@code roomed}),
   * gives them back. Answers the key's state after the decision.
   */
  private KeyState settle(Rule rule, String key, KeyState s, KeyState v, boolean admit, boolean roomed, long now,
      long cost, Eval e) {
    if (admit) {
      publish(rule, key, s, v);
      v.commit(now, cost, e);
      return v;
    }
    if (roomed) {
      discard(s, v);
    }
    return s;
  }

  /** Gives back what {@link #room} reserved for a view of {@code s} that was not stored after all. */
  private void discard(KeyState s, KeyState v) {
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
  private long fullRetryMicros(Rule rule, String key, List<Window> windows, long now) {
    Table t = table(rule);
    long bytes = keyBytes(key) + newStateBytes(rule, windows != null ? windows : rule.windowsFor(key));
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
  private boolean room(KeyState stored, KeyState s, long now, long cost, Eval e) {
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

  private void countFull(String rule) {
    LongAdder n = fullDenials.get(rule);
    if (n == null) {
      n = fullDenials.computeIfAbsent(rule, r -> new LongAdder());
    }
    n.increment();
  }

  /** Records, for store_full answers, when a state decided for the first time becomes idle. */
  private void firstDecided(KeyState s, long now) {
    budget.idleAt(account(s), s.idleAt(now));
  }

  /** Where {@code s}'s bytes are counted: its table's account, set when it was created. */
  private static Budget.Account account(KeyState s) {
    return (Budget.Account) s.account;
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    return CompletableFuture.completedFuture(decideSync(batch));
  }

  @Override
  public boolean isLocal() {
    return true;
  }

  /** Refuses a {@code sliding_log} window whose log could not be held (see {@link SlidingLog#check}). */
  @Override
  public void check(Rule rule) {
    SlidingLog.check(rule);
  }

  @Override
  public List<ItemDecision> decideSync(Batch batch) {
    long requested = batch.hasExplicitTime() ? batch.timeMicros() : ticker.nowMicros();
    List<ResolvedItem> items = batch.items();
    List<ItemDecision> out;
    if (items.size() != 1) {
      out = decideMany(batch, requested);
    } else {
      ResolvedItem item = items.get(0);
      out = item.rule().ban() == null && item.audit() == null ? decideOne(item, requested)
          : decidePolicies(batch, requested);
    }
    maybeSweep(requested);
    return out;
  }

  private List<ItemDecision> decideOne(ResolvedItem item, long requested) {
    while (true) {
      KeyState s = state(item.rule(), item.key(), item.windows(), requested);
      if (s == null) {
        return List.of(full(item, requested));
      }
      s.lock();
      try {
        if (s.dead) {
          continue; // evicted between lookup and lock: look it up again
        }
        KeyState v = view(item.rule(), s, item.windows());
        boolean first = v.lastSeen == Long.MIN_VALUE;
        long now = v.clamp(requested);
        Eval e = v.evaluate(now, item.cost());
        KeyState held = settle(item.rule(), item.key(), s, v,
            e.fits && item.cost() > 0 && room(s, v, now, item.cost(), e), false, now, item.cost(), e);
        if (first) {
          firstDecided(held, now);
        }
        return List.of(report(item, v, now, e));
      } finally {
        s.unlock();
      }
    }
  }

  /**
   * Decides exactly as {@link #decideOne} on the store's clock, and builds no report: the same
   * steps, kept apart so that the boolean path allocates nothing.
   *
   * <p>On a key whose latest decision here was a denial, it first tries to deny without the lock
   * ({@link KeyState#deniesWithoutLock}): a hot key over its limit is denied by reads alone, with
   * no atomic instruction and no write to the key's cache line. Such a denial does not record its
   * time as the key's latest, and that changes no decision. It consumed nothing, and a denial
   * stays a denial when units are consumed before it, so it can be placed just before the first
   * later-decided request whose time is not earlier than its own; requests decided in between
   * have earlier times, which on the store's monotonic ticker means they read the clock before
   * it did and ran concurrently with it. In that order the denial's time is the latest when it is
   * decided, and every other request is evaluated at the same time as in the locked store. A
   * request with an explicit time is ordered by that time in the same way. Anything else — it
   * fits, the state is held or changing, the time is behind the key's latest — takes the lock and
   * decides as before.
   */
  @Override
  public boolean tryAcquire(Rule rule, String key, long cost) {
    if (rule.ban() != null) {
      return Store.super.tryAcquire(rule, key, cost);
    }
    long requested = ticker.nowMicros();
    List<Window> ws = rule.windowsFor(key);
    boolean admitted;
    while (true) {
      KeyState s = state(rule, key, ws, requested);
      if (s == null) {
        countFull(rule.name());
        admitted = false;
        break;
      }
      if (s.denying && s.countsBy(ws) && s.deniesWithoutLock(requested, cost)) {
        admitted = false;
        break;
      }
      s.lock();
      try {
        if (s.dead) {
          continue;
        }
        KeyState v = view(rule, s, ws);
        boolean first = v.lastSeen == Long.MIN_VALUE;
        long now = v.clamp(requested);
        Eval e = v.evaluate(now, cost);
        KeyState held = settle(rule, key, s, v, e.fits && cost > 0 && room(s, v, now, cost, e), false, now, cost, e);
        if (first) {
          firstDecided(held, now);
        }
        admitted = e.fits;
        held.denying = !admitted;
        break;
      } finally {
        s.unlock();
      }
    }
    maybeSweep(requested);
    // A shadow rule's item never blocks its request.
    return admitted || rule.shadow();
  }

  private List<ItemDecision> decideMany(Batch batch, long requested) {
    List<ResolvedItem> items = batch.items();
    int n = items.size();
    for (int i = 0; i < n; i++) {
      if (items.get(i).rule().ban() != null || items.get(i).audit() != null) {
        return decidePolicies(batch, requested);
      }
    }
    while (true) {
      KeyState[] states = new KeyState[n];
      boolean full = false;
      for (int i = 0; i < n; i++) {
        ResolvedItem it = items.get(i);
        states[i] = state(it.rule(), it.key(), it.windows(), requested);
        full |= states[i] == null;
      }
      if (full) {
        return fullBatch(items, states, requested);
      }
      KeyState[] lockOrder = states.clone();
      Arrays.sort(lockOrder, Comparator.comparingLong(s -> s.order));
      List<ItemDecision> result = lockAll(lockOrder, () -> decideLocked(items, states, requested));
      if (result != null) {
        return result;
      }
    }
  }

  private interface Locked {
    List<ItemDecision> run();
  }

  /**
   * Locks {@code states} (sorted by {@link KeyState#order}) in order, then runs the body; null if
   * any state turned out dead.
   */
  private static List<ItemDecision> lockAll(KeyState[] states, Locked body) {
    int held = 0;
    try {
      for (; held < states.length; held++) {
        // The lock is not reentrant: a state listed twice is locked once.
        if (held == 0 || states[held] != states[held - 1]) {
          states[held].lock();
        }
      }
      for (KeyState s : states) {
        if (s.dead) {
          return null;
        }
      }
      return body.run();
    } finally {
      for (int i = held - 1; i >= 0; i--) {
        if (i == 0 || states[i] != states[i - 1]) {
          states[i].unlock();
        }
      }
    }
  }

  /**
   * Called with every state locked: evaluate all, make room for all (logs that must grow), commit
   * all or none, then report.
   */
  private List<ItemDecision> decideLocked(List<ResolvedItem> items, KeyState[] states, long requested) {
    int n = items.size();
    Eval[] evals = new Eval[n];
    long[] nows = new long[n];
    boolean[] first = new boolean[n];
    KeyState[] views = new KeyState[n];
    boolean[] roomed = new boolean[n];
    boolean enforcedFit = true;
    for (int i = 0; i < n; i++) {
      views[i] = view(items.get(i).rule(), states[i], items.get(i).windows());
      first[i] = views[i].lastSeen == Long.MIN_VALUE;
      nows[i] = views[i].clamp(requested);
      evals[i] = views[i].evaluate(nows[i], items.get(i).cost());
      if (!evals[i].fits && !items.get(i).rule().shadow()) {
        enforcedFit = false;
      }
    }
    if (enforcedFit) {
      // Growing before any commit keeps the transaction whole: a log denied its growth denies
      // the request, and room granted to the others is merely unused for now.
      for (int i = 0; i < n; i++) {
        long cost = items.get(i).cost();
        if (evals[i].fits && cost > 0) {
          roomed[i] = room(states[i], views[i], nows[i], cost, evals[i]);
          if (!roomed[i] && !items.get(i).rule().shadow()) {
            enforcedFit = false;
          }
        }
      }
    }
    ItemDecision[] out = new ItemDecision[n];
    for (int i = 0; i < n; i++) {
      ResolvedItem it = items.get(i);
      KeyState held = settle(it.rule(), it.key(), states[i], views[i], enforcedFit && evals[i].fits && it.cost() > 0,
          roomed[i], nows[i], it.cost(), evals[i]);
      if (first[i]) {
        firstDecided(held, nows[i]);
      }
      out[i] = report(items.get(i), views[i], nows[i], evals[i]);
    }
    return Arrays.asList(out);
  }

  /**
   * A request with an item whose rule bans or audits. Bans are looked up first, without
   * creating anything: a banned key's state is neither created nor read. An enforced item under
   * a ban denies the request (nothing of it is consumed; the other items are evaluated and
   * reported); a shadow item under a ban is reported banned and consumes nothing, and blocks
   * nothing. Then, as {@link #decideMany} decides, with two steps after the states are unlocked:
   * the items that count a denial toward their ban do ({@link BanCounts}: every item of a ban rule
   * when the request is denied for the use it asks, none when a ban in force denies it), and each
   * consumed item with an audit value records it.
   */
  private List<ItemDecision> decidePolicies(Batch batch, long requested) {
    List<ResolvedItem> items = batch.items();
    int n = items.size();
    ItemDecision[] out = new ItemDecision[n];
    boolean enforcedBan = false;
    for (int i = 0; i < n; i++) {
      ResolvedItem it = items.get(i);
      if (it.rule().ban() != null) {
        long until = bannedUntil(it.rule().name(), it.key(), requested);
        if (until != Long.MIN_VALUE) {
          out[i] = banned(it, until - requested);
          enforcedBan |= !it.rule().shadow();
        }
      }
    }
    long[] auditUntil = new long[n];
    Arrays.fill(auditUntil, Long.MIN_VALUE);
    while (true) {
      KeyState[] states = new KeyState[n];
      int held = 0;
      boolean full = false;
      for (int i = 0; i < n; i++) {
        if (out[i] == null || out[i].reason() != DenyReason.BANNED) {
          ResolvedItem it = items.get(i);
          states[i] = state(it.rule(), it.key(), it.windows(), requested);
          full |= states[i] == null;
          held += states[i] == null ? 0 : 1;
        }
      }
      if (full) {
        List<ItemDecision> reported = reportOnly(items, states, out, requested);
        reported.toArray(out);
        break;
      }
      KeyState[] lockOrder = new KeyState[held];
      for (int i = 0, k = 0; i < n; i++) {
        if (states[i] != null) {
          lockOrder[k++] = states[i];
        }
      }
      Arrays.sort(lockOrder, Comparator.comparingLong(s -> s.order));
      boolean ban = enforcedBan;
      List<ItemDecision> result = lockAll(lockOrder, () -> decidePoliciesLocked(items, states, out, ban, auditUntil,
          requested));
      if (result != null) {
        break;
      }
    }
    List<ItemDecision> decided = Arrays.asList(out);
    boolean[] counted = BanCounts.of(items, decided);
    for (int i = 0; i < n; i++) {
      ResolvedItem it = items.get(i);
      if (counted != null && counted[i]) {
        countDenial(it.rule(), it.key(), requested);
      }
      if (auditUntil[i] != Long.MIN_VALUE) {
        recordAudit(it.rule(), it.key(), it.audit(), auditUntil[i], requested);
      }
    }
    return decided;
  }

  /**
   * {@link #decideLocked} for {@link #decidePolicies}: items with a decision in {@code out}
   * (banned) are skipped, and {@code enforcedBan} denies the request. Sets, for each consumed
   * item with an audit value, when its key's state becomes idle (the audit list lasts as long).
   */
  private List<ItemDecision> decidePoliciesLocked(List<ResolvedItem> items, KeyState[] states, ItemDecision[] out,
      boolean enforcedBan, long[] auditUntil, long requested) {
    int n = items.size();
    Eval[] evals = new Eval[n];
    long[] nows = new long[n];
    boolean[] first = new boolean[n];
    KeyState[] views = new KeyState[n];
    boolean[] roomed = new boolean[n];
    boolean enforcedFit = !enforcedBan;
    for (int i = 0; i < n; i++) {
      if (states[i] == null) {
        continue;
      }
      views[i] = view(items.get(i).rule(), states[i], items.get(i).windows());
      first[i] = views[i].lastSeen == Long.MIN_VALUE;
      nows[i] = views[i].clamp(requested);
      evals[i] = views[i].evaluate(nows[i], items.get(i).cost());
      if (!evals[i].fits && !items.get(i).rule().shadow()) {
        enforcedFit = false;
      }
    }
    if (enforcedFit) {
      for (int i = 0; i < n; i++) {
        long cost = items.get(i).cost();
        if (states[i] != null && evals[i].fits && cost > 0) {
          roomed[i] = room(states[i], views[i], nows[i], cost, evals[i]);
          if (!roomed[i] && !items.get(i).rule().shadow()) {
            enforcedFit = false;
          }
        }
      }
    }
    for (int i = 0; i < n; i++) {
      if (states[i] == null) {
        continue;
      }
      ResolvedItem it = items.get(i);
      boolean admit = enforcedFit && evals[i].fits && it.cost() > 0;
      KeyState held = settle(it.rule(), it.key(), states[i], views[i], admit, roomed[i], nows[i], it.cost(), evals[i]);
      if (admit && it.audit() != null && it.rule().audit() != null) {
        auditUntil[i] = held.idleAt(nows[i]);
      }
      if (first[i]) {
        firstDecided(held, nows[i]);
      }
      out[i] = report(it, views[i], nows[i], evals[i]);
    }
    return Arrays.asList(out);
  }

  /** The store is full for some new key: nothing is consumed; banned items keep their answer. */
  private List<ItemDecision> reportOnly(List<ResolvedItem> items, KeyState[] states, ItemDecision[] banned,
      long requested) {
    List<ItemDecision> out = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      if (banned[i] != null && banned[i].reason() == DenyReason.BANNED) {
        out.add(banned[i]);
        continue;
      }
      out.add(fullBatch(List.of(items.get(i)), new KeyState[] {states[i]}, requested).get(0));
    }
    return out;
  }

  private static ItemDecision banned(ResolvedItem item, long leftMicros) {
    return new ItemDecision(item.rule().name(), item.key(), item.cost(), false, DenyReason.BANNED, 0, List.of(),
        item.rule().shadow(), KeyState.ceilMillis(leftMicros));
  }

  /** When the ban of {@code key} in force at {@code now} ends, or {@link Long#MIN_VALUE}. */
  private long bannedUntil(String rule, String key, long now) {
    Side side = sides.get(rule);
    KeyPolicy p = side == null ? null : side.keys.get(key);
    return p == null ? Long.MIN_VALUE : p.bannedAt(now);
  }

  private Side side(String rule) {
    Side s = sides.get(rule);
    if (s == null) {
      s = sides.computeIfAbsent(rule, r -> {
        Side fresh = new Side(r);
        budget.open(fresh.account);
        return fresh;
      });
    }
    return s;
  }

  /**
   * Runs {@code change} on the policy of {@code key}, created if absent, under its monitor; false
   * when there is no room to create it (nothing is kept: a ban not started, a value not
   * recorded, never an over-admission).
   */
  private boolean withPolicy(String rule, String key, java.util.function.Consumer<KeyPolicy> change) {
    while (true) {
      Side side = side(rule);
      KeyPolicy p = side.keys.get(key);
      if (p == null) {
        long bytes = keyBytes(key) + KeyPolicy.FIELDS;
        Budget.Refusal r = budget.reserve(side.account, 0, bytes);
        if (r == Budget.Refusal.RETIRED) {
          sides.remove(rule, side);
          continue;
        }
        if (r != null) {
          return false;
        }
        KeyPolicy created = new KeyPolicy();
        created.bytes = KeyPolicy.FIELDS;
        p = side.keys.putIfAbsent(key, created);
        if (p != null) {
          budget.release(side.account, 0, bytes);
        } else {
          p = created;
        }
      }
      synchronized (p) {
        if (p.dead) {
          continue; // swept between lookup and lock
        }
        change.accept(p);
        return true;
      }
    }
  }

  private void countDenial(Rule rule, String key, long now) {
    withPolicy(rule.name(), key, p -> p.countDenial(rule.ban(), now));
  }

  private void recordAudit(Rule rule, String key, String value, long until, long now) {
    int keep = rule.audit().keep();
    Side side = side(rule.name());
    withPolicy(rule.name(), key, p -> {
      long need = p.recordBytes(value, keep);
      if (budget.reserve(side.account, 0, need) == null) {
        long delta = p.record(value, keep, until);
        budget.release(side.account, 0, need - delta);
      }
    });
  }

  /**
   * Bans {@code key} under {@code rule} until {@code untilMicros} (on the store's clock) and
   * forgets its counted denials: decisions of a rule with a ban policy answer
   * {@link DenyReason#BANNED} until then. False if the store had no room to record it.
   */
  boolean banKey(Rule rule, String key, long untilMicros) {
    return withPolicy(rule.name(), key, p -> p.ban(untilMicros));
  }

  /** Lifts a ban of {@code key} under the rule named {@code rule} and forgets its counted denials. */
  void unbanKey(String rule, String key) {
    Side side = sides.get(rule);
    KeyPolicy p = side == null ? null : side.keys.get(key);
    if (p != null) {
      p.unban();
    }
  }

  /** The last distinct audited values that consumed {@code key} under the rule named {@code rule}, newest first. */
  List<String> audit(String rule, String key) {
    Side side = sides.get(rule);
    KeyPolicy p = side == null ? null : side.keys.get(key);
    return p == null ? List.of() : p.audit(ticker.nowMicros());
  }

  /** Drops the policies that hold nothing any more at {@code now}. Called by sweeps. */
  private void sweepPolicies(long now) {
    for (Side side : sides.values()) {
      long removed = 0;
      for (Map.Entry<String, KeyPolicy> en : side.keys.entrySet()) {
        KeyPolicy p = en.getValue();
        synchronized (p) {
          if (!p.dead && p.expired(now)) {
            p.dead = true;
            if (side.keys.remove(en.getKey(), p)) {
              removed += keyBytes(en.getKey()) + p.bytes;
            }
          }
        }
      }
      if (removed > 0) {
        budget.release(side.account, 0, removed);
      }
    }
  }

  private static ItemDecision report(ResolvedItem item, KeyState s, long now, Eval e) {
    long wait = e.fits ? KeyState.ceilMillis(e.startMicros - now) : 0;
    return new ItemDecision(item.rule().name(), item.key(), item.cost(), e.fits, e.reason, wait,
        windowStates(s, now, e), item.rule().shadow());
  }

  /** Already immutable, so the decision keeps it without another copy; no array for 1 or 2 windows. */
  private static List<WindowState> windowStates(KeyState s, long now, Eval e) {
    int w = s.windows();
    if (w == 1) {
      return List.of(s.report(now, 0, e));
    }
    if (w == 2) {
      return List.of(s.report(now, 0, e), s.report(now, 1, e));
    }
    WindowState[] ws = new WindowState[w];
    for (int i = 0; i < w; i++) {
      ws[i] = s.report(now, i, e);
    }
    return List.of(ws);
  }

  /** A new key without room: nothing is consumed; each window says when room may free up. */
  private ItemDecision full(ResolvedItem item, long now) {
    countFull(item.rule().name());
    long retry = fullRetryMicros(item.rule(), item.key(), item.windows(), now);
    long retryMs = retry < 0 ? WindowState.NEVER : KeyState.ceilMillis(retry);
    List<WindowState> ws = new ArrayList<>();
    for (Window w : item.windows()) {
      ws.add(new WindowState(w.limit(), w.periodMillis(), 0, retryMs, 0, true));
    }
    return new ItemDecision(item.rule().name(), item.key(), item.cost(), false, DenyReason.STORE_FULL, 0, ws,
        item.rule().shadow());
  }

  /** The store is full for some new key: nothing is consumed; held keys report their state. */
  private List<ItemDecision> fullBatch(List<ResolvedItem> items, KeyState[] states, long requested) {
    List<ItemDecision> out = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      ResolvedItem item = items.get(i);
      if (states[i] == null) {
        out.add(full(item, requested));
        continue;
      }
      KeyState s = states[i];
      s.lock();
      try {
        KeyState v = view(item.rule(), s, item.windows());
        boolean first = v.lastSeen == Long.MIN_VALUE;
        long now = v.clamp(requested);
        out.add(report(item, v, now, v.evaluate(now, item.cost())));
        if (first) {
          firstDecided(s, now);
        }
      } finally {
        s.unlock();
      }
    }
    return out;
  }

  private void maybeSweep(long now) {
    if (!automaticSweeps || (ThreadLocalRandom.current().nextInt() & 1023) != 0) {
      return;
    }
    // A time before the last sweep means a clock behind the one that swept (a replay); sweep on it.
    long last = lastSweep;
    if (now < last || now - last >= SWEEP_INTERVAL_MICROS) {
      cleanUp(now);
    }
  }

  /**
   * Drops every key whose windows are all empty now. Runs on the calling thread; returns at once
   * if another thread is already sweeping.
   */
  public void cleanUp() {
    cleanUp(ticker.nowMicros());
  }

  /** {@link #cleanUp()} as of an explicit time (replay clocks). */
  public void cleanUp(long nowMicros) {
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
        all = Math.min(all, earliest);
        if (t.account.borrowing) {
          borrowing = Math.min(borrowing, earliest);
        }
      }
      budget.all.sweepEnds(all);
      budget.borrowers.sweepEnds(borrowing);
      sweepPolicies(nowMicros);
      lastSweep = nowMicros;
    } finally {
      long ended = ticker.nowMicros();
      // Sweeps for room take at most about a tenth of one thread's time, however full the store.
      sweepPausedUntil = ended + SWEEP_PAUSE_FACTOR * Math.max(0, ended - started);
      sweeping.set(false);
    }
  }

  /** The state held for {@code key} under the rule named {@code rule}, or null; for tests. */
  KeyState held(String rule, String key) {
    Table t = tables.get(rule);
    return t == null ? null : t.keys.get(key);
  }

  /**
   * Keys and bytes of every held state, counted afresh by walking the tables; for tests, to
   * compare with the running counts. Only meaningful while no decision runs.
   */
  long[] recount() {
    long keys = 0;
    long bytes = 0;
    for (Table t : tables.values()) {
      for (Map.Entry<String, KeyState> en : t.keys.entrySet()) {
        keys++;
        bytes += keyBytes(en.getKey()) + en.getValue().bytes();
      }
    }
    for (Side side : sides.values()) {
      for (Map.Entry<String, KeyPolicy> en : side.keys.entrySet()) {
        bytes += keyBytes(en.getKey()) + en.getValue().bytes;
      }
    }
    return new long[] {keys, bytes};
  }

  /** Keys currently held. */
  public long size() {
    return budget.keys();
  }

  /** Heap bytes currently held by keys and their states (as counted by the store). */
  public long bytes() {
    return budget.bytes();
  }

  /** The most keys held at once. */
  public long maxKeys() {
    return budget.maxKeys();
  }

  /** The most heap bytes held at once. */
  public long maxBytes() {
    return budget.maxBytes();
  }

  /** Keys held for the rule named {@code rule}. */
  public long keys(String rule) {
    Table t = tables.get(rule);
    return t == null ? 0 : t.account.keys;
  }

  /** Heap bytes held for the rule named {@code rule}. */
  public long bytes(String rule) {
    Table t = tables.get(rule);
    return t == null ? 0 : t.account.bytes;
  }

  /**
   * Items of the rule named {@code rule} denied {@link DenyReason#STORE_FULL} since the rule came
   * into force (a change of its definition does not restart the count).
   */
  public long fullDenials(String rule) {
    LongAdder n = fullDenials.get(rule);
    return n == null ? 0 : n.sum();
  }

  /** Keys each rule in force is guaranteed: {@code maxKeys / (2n)} for n rules. */
  public long guaranteedKeys() {
    return budget.shareKeys();
  }

  /** Bytes each rule in force is guaranteed: {@code maxBytes / (2n)} for n rules. */
  public long guaranteedBytes() {
    return budget.shareBytes();
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    Table t = tables.get(rule);
    if (t != null) {
      KeyState s = t.keys.get(key);
      if (s != null) {
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
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    for (Table t : tables.values()) {
      Rule now = after.get(t.rule.name());
      if (now == null || !now.equals(t.rule)) {
        if (tables.remove(t.rule.name(), t)) {
          retire(t);
        }
      }
    }
    fullDenials.keySet().removeIf(name -> after.get(name) == null);
    for (Map.Entry<String, Side> en : sides.entrySet()) {
      Rule now = after.get(en.getKey());
      if ((now == null || now.ban() == null && now.audit() == null) && sides.remove(en.getKey(), en.getValue())) {
        budget.close(en.getValue().account);
      }
    }
    rulesInForce(after);
  }

  /**
   * Tells the store the rules in force, so that each has its guaranteed share from the start
   * rather than from its first key; {@link #rulesChanged} does it on every change. The limiter
   * built by {@code Sluice.builder()} calls it with its initial rules.
   */
  public void rulesInForce(RuleSet rules) {
    List<String> names = new ArrayList<>();
    for (Rule r : rules.rules()) {
      names.add(r.name());
    }
    budget.rulesInForce(names);
  }

  @Override
  public Optional<PolicyRecords> records() {
    return Optional.of(policies());
  }

  @Override
  public Optional<DenialSketches> sketches() {
    return Optional.of(policies());
  }

  @Override
  public Optional<Membership> membership() {
    return Optional.of(policies());
  }

  /** The policies this store keeps: its records, denial sketches and membership. */
  public MemoryPolicyStore policies() {
    MemoryPolicyStore p = policies;
    if (p == null) {
      synchronized (tables) {
        p = policies;
        if (p == null) {
          // Policy records have a bound of their own, beside the keys' (which each rule's share is
          // carved from): a quarter of the store's bytes.
          p = new MemoryPolicyStore(ticker, Math.max(1, budget.maxBytes() / 4));
          // The decision side of bans and audit lives here, beside the keys' states: the policy
          // store tells this store of ban records and reads audit lists from it.
          p.banListener(new MemoryPolicyStore.BanListener() {
            @Override
            public void banned(String rule, String key, long untilMicros) {
              withPolicy(rule, key, kp -> kp.ban(untilMicros));
            }

            @Override
            public void lifted(String rule, String key) {
              unbanKey(rule, key);
            }
          });
          p.auditSource(this::audit);
          policies = p;
        }
      }
    }
    return p;
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return CompletableFuture.completedFuture(true);
  }

  @Override
  public String describe() {
    return "memory";
  }

  @Override
  public void close() {
    tables.values().forEach(t -> t.retired = true);
    tables.clear();
    sides.clear();
    budget.clear();
  }

  /** Builds a {@link MemoryStore}. */
  public static final class Builder {
    private Ticker ticker = Ticker.system();
    private long maxKeys = 1_000_000;
    private long maxBytes;
    private boolean automaticSweeps = true;

    private Builder() {}

    /**
     * Whether decisions sweep idle keys now and then (the default). Without them, idle keys are
     * dropped only by {@link #cleanUp()} and when the key cap is reached. A forgotten key also
     * forgets the latest time it saw, so a store fed explicit times that go backwards decides
     * the same trace identically only when no sweep falls at a random point of it.
     */
    public Builder automaticSweeps(boolean on) {
      this.automaticSweeps = on;
      return this;
    }

    public Builder ticker(Ticker t) {
      this.ticker = java.util.Objects.requireNonNull(t, "ticker");
      return this;
    }

    /**
     * The most keys held at once, over all rules; default 1,000,000.
     *
     * @throws IllegalArgumentException if {@code n < 1}
     */
    public Builder maxKeys(long n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxKeys must be >= 1, was " + n);
      }
      this.maxKeys = n;
      return this;
    }

    /**
     * The most heap bytes the store's keys may hold: their strings, map entries and states.
     * Default: a quarter of the JVM's maximum heap ({@link Runtime#maxMemory()}), which leaves the
     * rest to the application (or the service's requests) and the garbage collector's headroom.
     *
     * @throws IllegalArgumentException if {@code bytes < 1}
     */
    public Builder maxBytes(long bytes) {
      if (bytes < 1) {
        throw new IllegalArgumentException("maxBytes must be >= 1, was " + bytes);
      }
      this.maxBytes = bytes;
      return this;
    }

    public MemoryStore build() {
      return new MemoryStore(this);
    }
  }

  static {
    // Every algorithm must have a state class; a new enum constant fails the switch at compile time.
    assert Algorithm.values().length == 5;
  }
}
