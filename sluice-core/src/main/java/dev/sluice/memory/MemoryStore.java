package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * State in process memory. Each (rule, key) has its own state object and lock, so unrelated
 * keys never contend; a multi-item request locks its items' states in a global order.
 *
 * <p><b>Eviction.</b> A key whose windows are all empty holds no information and is dropped by a
 * sweep. Sweeps run on a caller thread, at most one at a time, when at least a second has passed
 * since the last one (checked on about one decision in 1024), when the key cap is reached, and on
 * {@link #cleanUp()}. Automatic sweeps judge idleness at the time of the decision that triggers
 * them — its explicit time if it has one — because that is the clock its keys are counted on: a
 * replay running behind the ticker must not lose live keys to a sweep on the ticker's time.
 *
 * <p><b>Key cap.</b> At most {@code maxKeys} keys are held (default 1,000,000). When the cap is
 * reached and a sweep frees nothing, a request for a new key is denied with
 * {@link DenyReason#STORE_FULL}: forgetting a live key instead would let it over-admit. Keys
 * already held keep working.
 */
public final class MemoryStore implements Store {
  private static final long SWEEP_INTERVAL_MICROS = 1_000_000;

  private final Ticker ticker;
  private final long maxKeys;
  private final boolean automaticSweeps;
  private final ConcurrentHashMap<String, Table> tables = new ConcurrentHashMap<>();
  private final AtomicLong keyCount = new AtomicLong();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  /**
   * The table of the latest decision. Plain, not volatile: a stale or racy value costs only a
   * lookup, since it is used only after its rule and liveness are checked, and a Table's other
   * fields are final.
   */
  private Table lastTable;
  private volatile long lastSweep;

  private MemoryStore(Builder b) {
    this.ticker = b.ticker;
    this.maxKeys = b.maxKeys;
    this.automaticSweeps = b.automaticSweeps;
    this.lastSweep = ticker.nowMicros();
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
    /** Removed from {@code tables}: must not be found again through {@code lastTable}. */
    volatile boolean retired;

    Table(Rule rule) {
      this.rule = rule;
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
        return new Table(rule);
      });
    }
    if (lastTable != t) {
      lastTable = t;
    }
    return t;
  }

  /** Forgets a table that a rule change replaced or removed. */
  private void retire(Table t) {
    t.retired = true;
    keyCount.addAndGet(-t.keys.size());
  }

  static KeyState newState(Rule rule, List<Window> windows) {
    return switch (rule.algorithm()) {
      case SLIDING_LOG -> new SlidingLogState(windows);
      case SLIDING_WINDOW -> new SlidingWindowState(windows, rule.precision());
      case FIXED_WINDOW -> new FixedWindowState(windows);
      case TOKEN_BUCKET -> new TokenBucketState(windows);
      case LEAKY_BUCKET -> new LeakyBucketState(windows, rule.maxWaitFor(windows).toNanos() / 1000);
    };
  }

  /**
   * The state of {@code key}, created if absent with {@code windows} (the key's windows under the
   * rule when null); null when the store is full at {@code now}.
   */
  private KeyState state(Rule rule, String key, List<Window> windows, long now) {
    Table t = table(rule);
    KeyState s = t.keys.get(key);
    if (s != null) {
      return s;
    }
    if (keyCount.get() >= maxKeys) {
      cleanUp(now);
      if (keyCount.get() >= maxKeys) {
        return null;
      }
    }
    KeyState created = newState(rule, windows != null ? windows : rule.windowsFor(key));
    KeyState prior = t.keys.putIfAbsent(key, created);
    if (prior != null) {
      return prior;
    }
    keyCount.incrementAndGet();
    return created;
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    return CompletableFuture.completedFuture(decideSync(batch));
  }

  @Override
  public boolean isLocal() {
    return true;
  }

  /** Refuses a {@code sliding_log} window whose log could not be held (see {@link SlidingLogState#check}). */
  @Override
  public void check(Rule rule) {
    SlidingLogState.check(rule);
  }

  @Override
  public List<ItemDecision> decideSync(Batch batch) {
    long requested = batch.hasExplicitTime() ? batch.timeMicros() : ticker.nowMicros();
    List<ItemDecision> out = batch.items().size() == 1 ? decideOne(batch, requested) : decideMany(batch, requested);
    maybeSweep(requested);
    return out;
  }

  private List<ItemDecision> decideOne(Batch batch, long requested) {
    ResolvedItem item = batch.items().get(0);
    while (true) {
      KeyState s = state(item.rule(), item.key(), item.windows(), requested);
      if (s == null) {
        return List.of(full(item));
      }
      s.lock();
      try {
        if (s.dead) {
          continue; // evicted between lookup and lock: look it up again
        }
        long now = s.clamp(requested);
        Eval e = s.evaluate(now, item.cost());
        if (e.fits && item.cost() > 0) {
          s.commit(now, item.cost(), e);
        }
        return List.of(report(item, s, now, e));
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
    long requested = ticker.nowMicros();
    boolean admitted;
    while (true) {
      KeyState s = state(rule, key, null, requested);
      if (s == null) {
        admitted = false;
        break;
      }
      if (s.denying && s.deniesWithoutLock(requested, cost)) {
        admitted = false;
        break;
      }
      s.lock();
      try {
        if (s.dead) {
          continue;
        }
        long now = s.clamp(requested);
        Eval e = s.evaluate(now, cost);
        if (e.fits && cost > 0) {
          s.commit(now, cost, e);
        }
        admitted = e.fits;
        s.denying = !admitted;
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

  /** Called with every state locked: evaluate all, commit all or none, then report. */
  private static List<ItemDecision> decideLocked(List<ResolvedItem> items, KeyState[] states, long requested) {
    int n = items.size();
    Eval[] evals = new Eval[n];
    long[] nows = new long[n];
    boolean enforcedFit = true;
    for (int i = 0; i < n; i++) {
      nows[i] = states[i].clamp(requested);
      evals[i] = states[i].evaluate(nows[i], items.get(i).cost());
      if (!evals[i].fits && !items.get(i).rule().shadow()) {
        enforcedFit = false;
      }
    }
    if (enforcedFit) {
      for (int i = 0; i < n; i++) {
        if (evals[i].fits && items.get(i).cost() > 0) {
          states[i].commit(nows[i], items.get(i).cost(), evals[i]);
        }
      }
    }
    ItemDecision[] out = new ItemDecision[n];
    for (int i = 0; i < n; i++) {
      out[i] = report(items.get(i), states[i], nows[i], evals[i]);
    }
    return Arrays.asList(out);
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

  private static ItemDecision full(ResolvedItem item) {
    List<WindowState> ws = new ArrayList<>();
    for (Window w : item.windows()) {
      ws.add(new WindowState(w.limit(), w.periodMillis(), 0, 0, 0, true));
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
        out.add(full(item));
        continue;
      }
      KeyState s = states[i];
      s.lock();
      try {
        long now = s.clamp(requested);
        out.add(report(item, s, now, s.evaluate(now, item.cost())));
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
    try {
      for (Table t : tables.values()) {
        for (Map.Entry<String, KeyState> en : t.keys.entrySet()) {
          KeyState s = en.getValue();
          s.lock();
          try {
            if (!s.dead && s.idle(Math.max(nowMicros, s.lastSeen))) {
              s.dead = true;
              if (t.keys.remove(en.getKey(), s)) {
                keyCount.decrementAndGet();
              }
            }
          } finally {
            s.unlock();
          }
        }
      }
      lastSweep = nowMicros;
    } finally {
      sweeping.set(false);
    }
  }

  /** The state held for {@code key} under the rule named {@code rule}, or null; for tests. */
  KeyState held(String rule, String key) {
    Table t = tables.get(rule);
    return t == null ? null : t.keys.get(key);
  }

  /** Keys currently held. */
  public long size() {
    return keyCount.get();
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    Table t = tables.get(rule);
    if (t != null) {
      KeyState s = t.keys.get(key);
      if (s != null) {
        s.lock();
        try {
          if (!s.dead) {
            s.dead = true;
            if (t.keys.remove(key, s)) {
              keyCount.decrementAndGet();
            }
          }
        } finally {
          s.unlock();
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
    keyCount.set(0);
  }

  /** Builds a {@link MemoryStore}. */
  public static final class Builder {
    private Ticker ticker = Ticker.system();
    private long maxKeys = 1_000_000;
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

    /** @throws IllegalArgumentException if {@code n < 1} */
    public Builder maxKeys(long n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxKeys must be >= 1, was " + n);
      }
      this.maxKeys = n;
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
