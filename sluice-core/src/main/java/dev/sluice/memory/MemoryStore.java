package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.WindowState;
import dev.sluice.algorithm.AlgorithmTable;
import dev.sluice.algorithm.KeyState;
import dev.sluice.spi.BanCounts;
import dev.sluice.spi.Batch;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Grants;
import dev.sluice.spi.LeaseBoard;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

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
 * These are hooks of the store's one transaction; a request with no such item passes them at the
 * cost of a null check per item.
 *
 * <p><b>Parts.</b> Package-private classes with one job each: {@link KeyMap} (the states by rule
 * and key, their room, eviction), {@link Budget} (the caps and shares), {@link Decisions} (the
 * one transaction and its hooks), {@link Sides} (the per-key policies: bans, counted denials,
 * audit lists). States are made by the algorithm table ({@link AlgorithmTable}).
 */
public final class MemoryStore implements Store {
  private final Ticker ticker;
  private final Budget budget;
  private final Sides sides;
  private final KeyMap keys;
  private final Decisions decisions;
  private final MemoryGrants grants;
  /** Live limits, bans and lists of this store, on its ticker; made by the first {@link #policies()}. */
  private volatile MemoryPolicyStore policies;
  /** The leader record, reports and sizes of leased mode, on its ticker; made by the first {@link #leaseBoard()}. */
  private volatile MemoryLeaseBoard board;
  private final Object boardLock = new Object();

  private MemoryStore(Builder b) {
    this.ticker = b.ticker;
    this.budget = new Budget(b.maxKeys, b.maxBytes > 0 ? b.maxBytes : defaultMaxBytes());
    this.sides = new Sides(ticker, budget);
    this.keys = new KeyMap(ticker, budget, b.automaticSweeps, sides);
    this.decisions = new Decisions(ticker, keys, sides);
    this.grants = new MemoryGrants(ticker, keys, decisions);
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

  /** The heap bytes of a held key besides its state: its string and its map entry. */
  static long keyBytes(String key) {
    return KeyMap.keyBytes(key);
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    return CompletableFuture.completedFuture(decideSync(batch));
  }

  @Override
  public boolean isLocal() {
    return true;
  }

  /** Refuses a rule whose keys this store could not hold (see {@link AlgorithmTable#check}). */
  @Override
  public void check(Rule rule) {
    AlgorithmTable.of(rule.algorithm()).check(rule);
  }

  /**
   * Decides the batch in one transaction (see {@link Decisions}). A one-item request on a key
   * whose latest decision was a denial is first tried without the lock, as {@link #tryAcquire}
   * tries it, and its report is read from the same consistent state
   * ({@link KeyState#denialWithoutLock}).
   */
  @Override
  public List<ItemDecision> decideSync(Batch batch) {
    return decisions.decide(batch);
  }

  @Override
  public Ticker ticker() {
    return ticker;
  }

  /**
   * {@link #decideSync} of {@code item} alone, without the batch. On a key denied again it tries
   * the denial without the lock first, and answers the same decision object as long as nothing in
   * it changes ({@link KeyState#denialAloneWithoutLock}).
   */
  @Override
  public Decision decideAlone(Rule rule, String key, long cost, long at) {
    return decisions.decideAlone(rule, key, cost, at);
  }

  /**
   * Decides exactly as {@link #decideSync} on the store's clock, and builds no report: the same
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
  public boolean tryAcquire(Rule rule, String key, long cost, long at) {
    if (rule.ban() != null) {
      return Store.super.tryAcquire(rule, key, cost, at);
    }
    return decisions.tryAcquire(rule, key, cost, at);
  }

  /**
   * Bans {@code key} under {@code rule} until {@code untilMicros} (on the store's clock) and
   * forgets its counted denials: decisions of a rule with a ban policy answer
   * {@link DenyReason#BANNED} until then. False if the store had no room to record it.
   */
  boolean banKey(Rule rule, String key, long untilMicros) {
    return sides.ban(rule.name(), key, untilMicros);
  }

  /** Lifts a ban of {@code key} under the rule named {@code rule} and forgets its counted denials. */
  void unbanKey(String rule, String key) {
    sides.unban(rule, key);
  }

  /** The last distinct audited values that consumed {@code key} under the rule named {@code rule}, newest first. */
  List<String> audit(String rule, String key) {
    return sides.audit(rule, key);
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
    keys.cleanUp(nowMicros);
  }

  /** The state held for {@code key} under the rule named {@code rule}, or null; for tests. */
  KeyState held(String rule, String key) {
    return keys.held(rule, key);
  }

  /**
   * Keys and bytes of every held state and policy, counted afresh by walking the tables; for
   * tests, to compare with the running counts. Only meaningful while no decision runs.
   */
  long[] recount() {
    long[] counted = keys.recount();
    counted[1] += sides.recountBytes();
    return counted;
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
    return keys.keys(rule);
  }

  /** Heap bytes held for the rule named {@code rule}. */
  public long bytes(String rule) {
    return keys.bytes(rule);
  }

  /**
   * Items of the rule named {@code rule} denied {@link DenyReason#STORE_FULL} since the rule came
   * into force (a change of its definition does not restart the count).
   */
  public long fullDenials(String rule) {
    return keys.fullDenials(rule);
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
    keys.reset(rule, key);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    keys.rulesChanged(after);
    sides.rulesChanged(after);
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
  public Optional<Grants> grants() {
    return Optional.of(grants);
  }

  @Override
  public Optional<Membership> membership() {
    return Optional.of(policies());
  }

  /**
   * The leader record, usage reports and published sizes of leased mode, on this store's ticker:
   * at most 10,000 instances, and a sixteenth of the store's bytes (bounds of their own, beside
   * the keys').
   */
  @Override
  public Optional<LeaseBoard> leaseBoard() {
    MemoryLeaseBoard b = board;
    if (b == null) {
      synchronized (boardLock) {
        b = board;
        if (b == null) {
          b = new MemoryLeaseBoard(ticker, MemoryLeaseBoard.MAX_INSTANCES, Math.max(1, budget.maxBytes() / 16));
          board = b;
        }
      }
    }
    return Optional.of(b);
  }

  /** The policies this store keeps: its records, denial sketches and membership. */
  public MemoryPolicyStore policies() {
    MemoryPolicyStore p = policies;
    if (p == null) {
      synchronized (sides) {
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
              sides.ban(rule, key, untilMicros);
            }

            @Override
            public void lifted(String rule, String key) {
              sides.unban(rule, key);
            }
          });
          p.auditSource(sides::audit);
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
    keys.close();
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
}
