package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.FleetView;
import dev.sluice.OperationRequest;
import dev.sluice.policy.Policies;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.RuleSet;
import dev.sluice.Sleeper;
import dev.sluice.Ticker;
import dev.sluice.internal.lease.LeaseHolder;
import dev.sluice.internal.policy.DenialCache;
import dev.sluice.internal.policy.DenialRecorder;
import dev.sluice.internal.policy.EnginePolicies;
import dev.sluice.internal.policy.Fleet;
import dev.sluice.internal.policy.LocalSteps;
import dev.sluice.internal.policy.PolicyCache;
import dev.sluice.internal.policy.PolicyLog;
import dev.sluice.internal.policy.TopOffenders;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The limiter, a façade over the stages a request meets in order: {@link Resolver} (validation,
 * operations, repeated items merged), the local steps ({@link LocalStage}: access lists, cached
 * bans, live limits, a remote store's recent denials), {@link StoreCall} (the in-flight bound and
 * the timeout), {@link Degrade} (failure modes and the local share when the store is out) and
 * {@link Assemble} (the decision in request order, the denial recorder, listeners).
 *
 * <p>An enforced item denied by a local step means no store call at all: nothing is consumed,
 * and the items not decided there are reported allowed with empty windows. A rule none of the
 * local steps acts on costs one look per source of theirs ({@link LocalStage#acts}).
 */
public final class Engine implements RateLimiter {
  private final Store store;
  private final Store local;
  private final Sleeper sleeper;
  /** The store's policy records, null if it keeps none. */
  private final PolicyRecords records;
  private final PolicyCache policyCache;
  /** Denials of a remote store, kept until just before they could change; null when off. */
  private final DenialCache denials;
  private final Resolver resolver;
  private final StoreCall call;
  private final Degrade degrade;
  private final Assemble assemble;
  private final BooleanPaths booleans;
  /** Null when the store keeps no policy records. */
  private final EnginePolicies policies;
  private final LocalStage steps;
  /** This limiter's id in the store: its heartbeats' and its leases'. */
  private final String instanceId = LeaseHolder.newId("");
  /** Null when the store is not shared or keeps no heartbeats. */
  private final Fleet fleet;

  /** A limiter of what {@code c} holds; the store given is checked against the rules first. */
  public Engine(EngineConfig c) {
    Store store = c.store();
    Ticker ticker = c.ticker();
    this.records = store.records().orElse(null);
    Resolver.check(store, records != null, c.rules());
    this.store = store;
    this.local = c.local();
    this.sleeper = c.sleeper();
    DecisionListener[] listeners = c.listeners().toArray(new DecisionListener[0]);
    this.policyCache = new PolicyCache(records, store.isLocal(), c.rules(), true, c.maxPolicyBytes(),
        new PolicyLog(ticker, listeners));
    this.denials = c.denialCacheKeys() > 0 && !store.isLocal() ? new DenialCache(c.denialCacheKeys()) : null;
    LocalStage steps = new LocalStage(LocalSteps.inOrder(policyCache, ticker, records != null, denials, listeners,
        store, this::rules, c.maxKeyBytes(), instanceId), ticker);
    this.steps = steps;
    this.resolver = new Resolver(store, c.maxKeyBytes(), steps, c.rules());
    this.call = new StoreCall(store, c.storeTimeout().toMillis(), c.maxInFlight());
    Fleet fleet = store.isLocal() ? null : store.membership().map(m -> new Fleet(m, ticker, instanceId))
        .orElse(null);
    this.fleet = fleet;
    if (fleet != null) {
      policyCache.onTick(fleet::tick);
    }
    this.degrade = new Degrade(local, c.localShare(), fleet, listeners, call.timeoutMillis());
    this.assemble = new Assemble(steps, listeners);
    TopOffenders top = store.sketches().map(s -> new TopOffenders(s, ticker)).orElse(null);
    if (top != null) {
      assemble.recorder(top);
      policyCache.onTick(top::tick);
    }
    this.booleans = new BooleanPaths(resolver, store, call, policyCache, denials, ticker, assemble, degrade, steps);
    this.policies = records == null ? null : new EnginePolicies(resolver, records, policyCache, top, ticker);
  }

  @Override
  public Decision acquire(Request request) {
    return decide(resolver.resolve(request));
  }

  /** Without listeners, on a local store, the store's decision alone ({@link BooleanPaths#acquire}) if it can. */
  @Override
  public Decision acquire(String ruleName, String key, long cost) {
    Decision fast = booleans.acquire(ruleName, key, cost);
    return fast != null ? fast : acquire(Request.of(ruleName, key, cost));
  }

  @Override
  public Decision acquire(String ruleName, String key) {
    return acquire(ruleName, key, 1);
  }

  @Override
  public Decision acquire(OperationRequest request) {
    return decide(resolver.resolve(request));
  }

  @Override
  public boolean tryAcquire(OperationRequest request) {
    Resolved r = resolver.resolve(request);
    for (ResolvedItem it : r.batch().items()) {
      if (it.rule().algorithm() == Algorithm.LEAKY_BUCKET) {
        // The interface's default says why, in the same words as for tryAcquire(rule, key).
        return RateLimiter.super.tryAcquire(request);
      }
    }
    return decide(r).allowed();
  }

  private Decision decide(Resolved r) {
    // A clock read costs about as much as a whole in-memory decision: only time for listeners.
    long start = assemble.heard() ? System.nanoTime() : 0;
    Decision d;
    if (r.skipStore()) {
      d = assemble.decision(r, List.of(), false);
    } else if (store.isLocal()) {
      d = assemble.decision(r, store.decideSync(r.batch()), false);
    } else {
      try {
        d = assemble.decision(r, call.decide(r.batch()), false);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        d = degraded(r, e);
      } catch (Exception e) {
        d = degraded(r, e);
      }
    }
    assemble.notify(r.request(), d, start);
    return d;
  }

  private Decision degraded(Resolved r, Throwable error) {
    return assemble.decision(r, degrade.decide(r, error), true);
  }

  /**
   * Without listeners, on a local store, the store answers the boolean itself and no decision is
   * built ({@link BooleanPaths}); otherwise this is {@code acquire(...).allowed()}, so listeners
   * and failure modes see every decision.
   */
  @Override
  public boolean tryAcquire(String ruleName, String key, long cost) {
    Boolean fast = booleans.tryAcquire(ruleName, key, cost);
    return fast != null ? fast : RateLimiter.super.tryAcquire(ruleName, key, cost);
  }

  @Override
  public CompletionStage<Decision> acquireAsync(Request request) {
    return decideAsync(() -> resolver.resolve(request));
  }

  @Override
  public CompletionStage<Decision> acquireAsync(OperationRequest request) {
    return decideAsync(() -> resolver.resolve(request));
  }

  private CompletionStage<Decision> decideAsync(Supplier<Resolved> resolve) {
    Resolved r;
    try {
      r = resolve.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    long start = assemble.heard() ? System.nanoTime() : 0;
    if (r.skipStore() || store.isLocal()) {
      Decision d = assemble.decision(r, r.skipStore() ? List.of() : store.decideSync(r.batch()), false);
      assemble.notify(r.request(), d, start);
      return CompletableFuture.completedFuture(d);
    }
    return call.decideAsync(r.batch()).handle((items, err) -> {
      Decision d = err == null ? assemble.decision(r, items, false) : degraded(r, err);
      assemble.notify(r.request(), d, start);
      return d;
    });
  }

  /** As {@code acquireAsync(...).thenApply(Decision::allowed)}, without a decision where nobody reads one. */
  @Override
  public CompletionStage<Boolean> tryAcquireAsync(String ruleName, String key, long cost) {
    CompletionStage<Boolean> fast = booleans.tryAcquireAsync(ruleName, key, cost);
    return fast != null ? fast : RateLimiter.super.tryAcquireAsync(ruleName, key, cost);
  }

  @Override
  public Decision acquireBlocking(Request request, Duration timeout) throws InterruptedException {
    return Blocking.acquire(() -> acquire(request), timeout, sleeper);
  }

  /** Each retry resolves the operation again, with its attributes (audit values among them). */
  @Override
  public Decision acquireBlocking(OperationRequest request, Duration timeout) throws InterruptedException {
    return Blocking.acquire(() -> acquire(request), timeout, sleeper);
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    try {
      resolver.validate(resolver.rules().get(rule), rule, key, 0);
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(e);
    }
    local.reset(rule, key);
    if (denials == null) {
      return store.reset(rule, key);
    }
    // Forgotten again once the store has reset: a denial it answered meanwhile predates the reset.
    denials.forget(rule, key);
    return store.reset(rule, key).whenComplete((v, err) -> denials.forget(rule, key));
  }

  /** A limiter whose store is not shared, or keeps no heartbeats, answers itself alone. */
  @Override
  public CompletionStage<FleetView> fleet(int max) {
    return Fleet.view(fleet, instanceId, max);
  }

  @Override
  public RuleSet rules() {
    return resolver.rules();
  }

  /**
   * @throws dev.sluice.UnsupportedRuleException if the store cannot decide a rule of {@code next}:
   *     the rules in force stay
   */
  @Override
  public synchronized void updateRules(RuleSet next) {
    Resolver.check(store, records != null, next);
    RuleSet before = resolver.rules();
    policyCache.rulesChanged(next);
    resolver.rules(next);
    store.rulesChanged(before, next);
    local.rulesChanged(before, next);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return store.ping();
  }

  /**
   * @throws UnsupportedOperationException if the store keeps no policies
   */
  @Override
  public Policies policies() {
    if (policies == null) {
      throw new UnsupportedOperationException(store.describe() + " keeps no policies");
    }
    return policies;
  }

  /** Sets what is told of denied items (the top-offenders sketch); {@link DenialRecorder#NONE} by default. */
  public void denialRecorder(DenialRecorder r) {
    assemble.recorder(r);
  }

  /** The share of each limit {@code failure_mode: local} holds now (see {@link Degrade#localShare}). */
  public double localShare() {
    return degrade.localShare();
  }

  public Store store() {
    return store;
  }

  @Override
  public void close() {
    // The poll stops first, so that no heartbeat of its follows the leave.
    policyCache.close();
    steps.close(); // what a step holds of the store (leased units) goes back while it is open
    degrade.leave();
    store.close();
    local.close();
  }
}
