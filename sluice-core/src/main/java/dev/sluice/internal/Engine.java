package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.Attribute;
import dev.sluice.AuditPolicy;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.InvalidCostException;
import dev.sluice.InvalidKeyException;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.LiveLimit;
import dev.sluice.Policies;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sleeper;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.UnknownRuleException;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.Batch;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import dev.sluice.algorithm.LeakyBucket;
import dev.sluice.internal.policy.DenialCache;
import dev.sluice.internal.policy.DenialRecorder;
import dev.sluice.internal.policy.EnginePolicies;
import dev.sluice.internal.policy.Fleet;
import dev.sluice.internal.policy.PolicyCache;
import dev.sluice.internal.policy.PolicyLog;
import dev.sluice.internal.policy.RequestChecks;
import dev.sluice.internal.policy.TopOffenders;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The limiter: validates and resolves requests, hands them to the store as one batch, applies
 * failure modes when the store is out (and fails the request when the store could not decide it
 * for any other reason), and tells listeners.
 *
 * <p>Between resolution and the store, the local step applies the policies this limiter caches
 * ({@link PolicyCache}), per item in this order: the item's own windows for this request
 * ({@link Item#windows()}) or else, further down, its live limit; the deny list
 * ({@link DenyReason#DENY_LISTED}); the allow list (admitted, not sent to the store); a ban known
 * to be in force ({@link DenyReason#BANNED}); then, on a remote store, a denial the store answered
 * moments before and that still holds ({@link DenialCache}). An enforced item denied here means no
 * store call at all: nothing is consumed, and the items not decided here are reported allowed with
 * empty windows. A rule without lists, bans or live limits costs a lookup that finds nothing.
 */
public final class Engine implements RateLimiter, RequestChecks {
  /** Up to this many items, a request's repeated items are found by comparing pairs. */
  private static final int FEW_ITEMS = 8;
  /** tryAcquireAsync's answers on a local store: immutable through {@link CompletionStage}, so shared. */
  private static final CompletionStage<Boolean> ADMITTED = CompletableFuture.completedStage(Boolean.TRUE);
  private static final CompletionStage<Boolean> REFUSED = CompletableFuture.completedStage(Boolean.FALSE);
  /** {@link Resolved#startMicros} of a request the denial cache does not see. */
  private static final long NO_START = Long.MIN_VALUE;

  private final Store store;
  private final Store local;
  /** The share of each limit {@code failure_mode: local} holds; NaN: 1 / the instances counted. */
  private final double localShare;
  private final int maxKeyBytes;
  private final long storeTimeoutMillis;
  private final int maxInFlight;
  /** Store calls made and not yet answered, whether or not their callers still wait. */
  private final AtomicInteger inFlight = new AtomicInteger();
  private final DecisionListener[] listeners;
  private final Sleeper sleeper;
  private final Ticker ticker;
  /** The store's policy records, null if it keeps none. */
  private final PolicyRecords policyStore;
  private final PolicyCache policyCache;
  private final EnginePolicies policies;
  private volatile DenialRecorder recorder = DenialRecorder.NONE;
  /** Null when the store keeps no policies. */
  private final TopOffenders topOffenders;
  /** Denials of a remote store, kept until just before they could change; null when off. */
  private final DenialCache denials;
  /** The instances sharing a remote store with policies; null otherwise. */
  private final Fleet fleet;
  private volatile RuleSet rules;

  /** A limiter of what {@code c} holds; the store given is checked against the rules first. */
  public Engine(EngineConfig c) {
    RuleSet rules = c.rules();
    Store store = c.store();
    Ticker ticker = c.ticker();
    PolicyRecords ps = store.records().orElse(null);
    this.policyStore = ps;
    check(store, ps, rules);
    this.rules = rules;
    this.store = store;
    this.local = c.local();
    this.localShare = c.localShare();
    this.maxKeyBytes = c.maxKeyBytes();
    this.storeTimeoutMillis = c.storeTimeout().toMillis();
    this.maxInFlight = c.maxInFlight();
    this.listeners = c.listeners().toArray(new DecisionListener[0]);
    this.sleeper = c.sleeper();
    this.ticker = ticker;
    this.policyCache = new PolicyCache(ps, store.isLocal(), rules, true, c.maxPolicyBytes(),
        new PolicyLog(ticker, this.listeners));
    this.denials = c.denialCacheKeys() > 0 && !store.isLocal() ? new DenialCache(c.denialCacheKeys()) : null;
    this.fleet = store.isLocal() ? null : store.membership().map(m -> new Fleet(m, ticker)).orElse(null);
    if (fleet != null) {
      policyCache.onTick(fleet::tick);
    }
    this.topOffenders = store.sketches().map(s -> new TopOffenders(s, ticker)).orElse(null);
    this.policies = ps == null ? null : new EnginePolicies(this, ps, policyCache, topOffenders, ticker);
    if (topOffenders != null) {
      this.recorder = topOffenders;
      policyCache.onTick(topOffenders::tick);
    }
  }

  /**
   * A request after validation: the batch for the store and where each request item went; for a
   * request by operation, the operation request it was made from, so that the attributes stay at
   * hand for any step after resolution.
   */
  private record Resolved(Request request, Batch batch, int[] slot, OperationRequest operation,
      ItemDecision[] pre, boolean skipStore, long startMicros) {

    Resolved(Request request, Batch batch, int[] slot, OperationRequest operation, long startMicros) {
      this(request, batch, slot, operation, null, false, startMicros);
    }
  }

  private Resolved resolve(Request request) {
    return resolve(request, rules, null);
  }

  /**
   * Resolves an operation request against one snapshot of the rules in force, so that its
   * operation and the rules its items name come from the same configuration.
   */
  private Resolved resolve(OperationRequest operation) {
    RuleSet rs = rules;
    return resolve(rs.resolve(operation), rs, operation);
  }

  private Resolved resolve(Request request, RuleSet rs, OperationRequest operation) {
    Map<String, PolicyCache.RulePolicies> policiesNow = policyCache.current();
    // Read before the store is called, so before it decides: a denial it answers is kept from here.
    long start = denials == null || request.hasExplicitTime() ? NO_START : ticker.nowMicros();
    boolean cachedDenials = start != NO_START && !denials.isEmpty();
    List<Item> items = request.items();
    if (items.size() == 1) {
      Item it = items.get(0);
      Rule rule = validate(rs.get(it.rule()), it.rule(), it.key(), 0);
      if ((policiesNow == null || !policiesNow.containsKey(rule.name())) && it.windows() == null
          && (operation == null || rule.audit() == null) && !cachedDenials) {
        return new Resolved(request, new Batch(List.of(resolveItem(rule, it.key(), it.cost())), request.timeMicros()),
            null, operation, start);
      }
      return local(request, items, List.of(rule), null, rs, operation, policiesNow, start);
    }
    // Repeated (rule, key) pairs are decided as one item of their summed cost. Each pair is checked
    // when first seen, in request order, so the first bad item is the one reported. A few items
    // are compared pair by pair; a hash of their names would cost more than the whole comparison.
    int n = items.size();
    Map<String, Integer> seen = n > FEW_ITEMS ? new HashMap<>() : null;
    List<Item> merged = new ArrayList<>(n);
    List<Rule> ruleOf = new ArrayList<>(n);
    int[] slot = new int[n];
    boolean plain = policiesNow == null && !cachedDenials;
    for (int i = 0; i < n; i++) {
      Item it = items.get(i);
      String id = seen == null ? null : it.rule() + '\u0000' + it.key();
      int at = seen == null ? indexOf(merged, it) : seen.getOrDefault(id, -1);
      if (at < 0) {
        Rule rule = validate(rs.get(it.rule()), it.rule(), it.key(), i);
        ruleOf.add(rule);
        plain &= it.windows() == null && (operation == null || rule.audit() == null);
        if (seen != null) {
          seen.put(id, merged.size());
        }
        slot[i] = merged.size();
        merged.add(it);
      } else {
        slot[i] = at;
        Item prev = merged.get(at);
        if (it.cost() > Long.MAX_VALUE - prev.cost()) {
          throw new InvalidCostException(it.rule(), it.cost(), "the costs of the repeated item (rule '" + it.rule()
              + "', key '" + it.key() + "') add up to more than " + Long.MAX_VALUE);
        }
        merged.set(at, new Item(prev.rule(), prev.key(), prev.cost() + it.cost(), prev.windows()));
      }
    }
    if (merged.size() == n) {
      slot = null; // every item distinct: decisions come back in request order
    }
    if (!plain) {
      return local(request, merged, ruleOf, slot, rs, operation, policiesNow, start);
    }
    List<ResolvedItem> resolved = new ArrayList<>(merged.size());
    for (int i = 0; i < merged.size(); i++) {
      Item it = merged.get(i);
      resolved.add(resolveItem(ruleOf.get(i), it.key(), it.cost()));
    }
    return new Resolved(request, new Batch(resolved, request.timeMicros()), slot, operation, start);
  }

  /**
   * The local step (see the class comment) over the distinct items of a request: what it decides
   * goes to {@code pre}, the rest to the store's batch with their windows and audit values.
   */
  private Resolved local(Request request, List<Item> merged, List<Rule> ruleOf, int[] slot, RuleSet rs,
      OperationRequest operation, Map<String, PolicyCache.RulePolicies> policiesNow, long start) {
    int n = merged.size();
    ItemDecision[] pre = null;
    boolean deniedHere = false;
    long now = Long.MIN_VALUE;
    List<ResolvedItem> toStore = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Item it = merged.get(i);
      Rule rule = ruleOf.get(i);
      String key = it.key();
      PolicyCache.RulePolicies p = policiesNow == null ? null : policiesNow.get(rule.name());
      List<Window> ws = it.windows();
      if (ws != null) {
        checkWindows(rule, ws); // a request's own windows are refused as a rule's would be
      }
      ItemDecision here = null;
      if (p != null) {
        if (p.denies(key)) {
          here = new ItemDecision(rule.name(), key, it.cost(), false, DenyReason.DENY_LISTED, 0, List.of(),
              rule.shadow(), WindowState.NEVER);
        } else if (p.allows(key)) {
          here = new ItemDecision(rule.name(), key, it.cost(), true, DenyReason.NONE, 0, List.of(), rule.shadow(), 0);
        } else {
          if (p.hasBans()) {
            if (now == Long.MIN_VALUE) {
              now = nowMillis();
            }
            long left = p.bannedFor(key, now);
            if (left > 0) {
              here = new ItemDecision(rule.name(), key, it.cost(), false, DenyReason.BANNED, 0, List.of(),
                  rule.shadow(), left);
            }
          }
          if (here == null && ws == null) {
            LiveLimit l = p.limit(key);
            if (l != null) {
              ws = l.windowsUnder(rs); // null for a tier no longer in force: the key's own windows
            }
          }
        }
      }
      if (ws == null) {
        ws = rule.windowsFor(key);
      }
      if (here == null && start != NO_START) {
        here = denials.check(rule, key, it.cost(), ws, start, ruleOf);
        if (here != null) {
          for (DecisionListener l : listeners) {
            try {
              l.onCachedDenial(rule.name(), key);
            } catch (RuntimeException ignored) {
              // A listener must not change a decision.
            }
          }
        }
      }
      if (here != null) {
        if (pre == null) {
          pre = new ItemDecision[n];
        }
        pre[i] = here;
        deniedHere |= !here.allowed() && !rule.shadow();
        continue;
      }
      toStore.add(new ResolvedItem(rule, key, it.cost(), ws, auditValue(rule, rs, operation)));
    }
    return new Resolved(request, new Batch(toStore, request.timeMicros()), slot, operation, pre,
        deniedHere || toStore.isEmpty(), start);
  }

  /** The request's value of the rule's audit attribute, as its keys are made of it; null if none. */
  private static String auditValue(Rule rule, RuleSet rs, OperationRequest operation) {
    AuditPolicy a = rule.audit();
    if (a == null || operation == null) {
      return null;
    }
    String v = operation.attributes().get(a.attribute());
    if (v == null) {
      return null;
    }
    Attribute typed = rs.attribute(a.attribute());
    return typed == null ? v : typed.keyText(v);
  }

  /** The index of the item in {@code distinct} with the same rule and key as {@code it}, or -1. */
  private static int indexOf(List<Item> distinct, Item it) {
    for (int j = 0; j < distinct.size(); j++) {
      Item d = distinct.get(j);
      if (d.key().equals(it.key()) && d.rule().equals(it.rule())) {
        return j;
      }
    }
    return -1;
  }

  long nowMillis() {
    return Math.floorDiv(ticker.nowMicros(), 1000L);
  }

  private static ResolvedItem resolveItem(Rule rule, String key, long cost) {
    return new ResolvedItem(rule, key, cost, rule.windowsFor(key));
  }

  /**
   * The limiter's one check of a rule and a key, for every path in (acquire, tryAcquire, reset):
   * front ends map its exceptions by type and check nothing of their own.
   *
   * @param rule the rule named {@code ruleName}, null if none is in force
   * @param item the position of the item in its request
   * @return {@code rule}
   * @throws UnknownRuleException if {@code rule} is null
   * @throws InvalidKeyException if {@code key} is empty, not valid Unicode or too long
   */
  private Rule validate(Rule rule, String ruleName, String key, int item) {
    if (rule == null) {
      throw new UnknownRuleException(ruleName);
    }
    if (key.isEmpty()) {
      throw new InvalidKeyException(ruleName, item, 0, "must not be empty");
    }
    long bytes = utf8Length(key, ruleName, item);
    if (bytes > maxKeyBytes) {
      throw new InvalidKeyException(ruleName, item, bytes,
          "is " + bytes + " bytes of UTF-8; the maximum is " + maxKeyBytes);
    }
    return rule;
  }

  /**
   * The key's length in UTF-8. A lone surrogate has no UTF-8 form: encoders replace it with '?',
   * so two distinct keys would become one in any store that keeps bytes. Such keys are rejected.
   */
  private static long utf8Length(String key, String rule, int item) {
    int n = key.length();
    int ascii = 0;
    while (ascii < n && key.charAt(ascii) < 0x80) {
      ascii++; // the common key: one byte per char, and nothing else to check
    }
    long bytes = ascii;
    for (int i = ascii; i < n; i++) {
      char c = key.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (!Character.isSurrogate(c)) {
        bytes += 3;
      } else if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        throw new InvalidKeyException(rule, item, -1, "has a lone surrogate (U+"
            + Integer.toHexString(c).toUpperCase(java.util.Locale.ROOT) + ") at index " + i
            + "; a key must be valid Unicode");
      }
    }
    return bytes;
  }

  private Decision assemble(Resolved r, List<ItemDecision> decided, boolean degraded) {
    if (!degraded && r.startMicros != NO_START && !r.skipStore) {
      List<ResolvedItem> sent = r.batch.items();
      for (int i = 0; i < sent.size(); i++) {
        ResolvedItem it = sent.get(i);
        denials.learn(it.rule(), it.key(), it.cost(), it.windows(), decided.get(i), r.startMicros);
      }
    }
    if (!degraded) {
      // Bans are learned from the store's answers only: a ban this limiter answered from its
      // cache may have been lifted since, and learning it again would bring it back.
      for (int i = 0; i < decided.size(); i++) {
        ItemDecision d = decided.get(i);
        if (d.reason() == DenyReason.BANNED) {
          learnBan(d);
        }
      }
    }
    if (r.pre != null || r.skipStore) {
      decided = withLocal(r, decided);
    }
    if (!degraded) {
      for (int i = 0; i < decided.size(); i++) {
        ItemDecision d = decided.get(i);
        if (!d.allowed()) {
          try {
            recorder.denied(d.rule(), d.key(), d.reason());
          } catch (RuntimeException ignored) {
            // Counting must not change a decision.
          }
        }
      }
    }
    if (r.slot == null) {
      return Decision.of(decided, degraded);
    }
    List<Item> items = r.request.items();
    List<ItemDecision> out = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      ItemDecision d = decided.get(r.slot[i]);
      if (d.cost() != items.get(i).cost()) {
        d = new ItemDecision(d.rule(), d.key(), items.get(i).cost(), d.allowed(), d.reason(), d.waitMs(), d.windows(),
            d.shadow(), d.blockedMs());
      }
      out.add(d);
    }
    return Decision.of(out, degraded);
  }

  /**
   * The decisions of every distinct item: the local step's, and the store's for the rest (or,
   * when the store was not called, allowed with empty windows: nothing was decided for them).
   */
  private static List<ItemDecision> withLocal(Resolved r, List<ItemDecision> fromStore) {
    List<ResolvedItem> sent = r.batch.items();
    int n = sent.size() + (r.pre == null ? 0 : countNonNull(r.pre));
    List<ItemDecision> out = new ArrayList<>(n);
    int j = 0;
    for (int i = 0; i < n; i++) {
      ItemDecision d = r.pre == null ? null : r.pre[i];
      if (d == null) {
        if (r.skipStore) {
          ResolvedItem it = sent.get(j++);
          d = new ItemDecision(it.rule().name(), it.key(), it.cost(), true, DenyReason.NONE, 0, List.of(),
              it.rule().shadow(), 0);
        } else {
          d = fromStore.get(j++);
        }
      }
      out.add(d);
    }
    return out;
  }

  private static int countNonNull(Object[] a) {
    int c = 0;
    for (Object o : a) {
      if (o != null) {
        c++;
      }
    }
    return c;
  }

  /**
   * A ban the store answered (not degraded) is cached until it ends, and recorded once as an
   * automatic ban, for every instance and for listings.
   */
  private void learnBan(ItemDecision d) {
    if (d.blockedMs() > 0 && policyStore != null) {
      long until = nowMillis() + d.blockedMs();
      if (policyCache.learnBan(d.rule(), d.key(), until)) {
        policyCache.recordBan(d.rule(), d.key(), until);
      }
    }
  }

  @Override
  public Decision acquire(Request request) {
    return decide(resolve(request));
  }

  @Override
  public Decision acquire(OperationRequest request) {
    return decide(resolve(request));
  }

  @Override
  public boolean tryAcquire(OperationRequest request) {
    Resolved r = resolve(request);
    for (ResolvedItem it : r.batch.items()) {
      if (it.rule().algorithm() == Algorithm.LEAKY_BUCKET) {
        // The interface's default says why, in the same words as for tryAcquire(rule, key).
        return RateLimiter.super.tryAcquire(request);
      }
    }
    return decide(r).allowed();
  }

  private Decision decide(Resolved r) {
    Request request = r.request;
    // A clock read costs about as much as a whole in-memory decision: only time for listeners.
    long start = listeners.length == 0 ? 0 : System.nanoTime();
    Decision d;
    if (r.skipStore) {
      d = assemble(r, List.of(), false);
    } else if (store.isLocal()) {
      d = assemble(r, store.decideSync(r.batch), false);
    } else {
      try {
        CompletableFuture<List<ItemDecision>> call = callStore(r.batch);
        // Waiting on the caller's own thread: a slow store holds callers at most the timeout
        // and starts no thread of its own.
        d = assemble(r, call.get(storeTimeoutMillis, TimeUnit.MILLISECONDS), false);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        d = degrade(r, e);
      } catch (Exception e) {
        d = degrade(r, e);
      }
    }
    notify(request, d, start);
    return d;
  }

  /**
   * Without listeners, on a local store, the store answers the boolean itself and no decision is
   * built; otherwise (and for unknown and shaping rules, which the interface's default rejects)
   * this is {@code acquire(...).allowed()}, so listeners and failure modes see every decision.
   */
  @Override
  public boolean tryAcquire(String ruleName, String key, long cost) {
    Rule rule = rules.get(ruleName);
    if (rule == null || rule.algorithm() == Algorithm.LEAKY_BUCKET || listeners.length != 0 || !store.isLocal()
        || hasPolicies(rule)) {
      return RateLimiter.super.tryAcquire(ruleName, key, cost);
    }
    java.util.Objects.requireNonNull(key, "key");
    if (cost < 0) {
      throw InvalidCostException.negative(ruleName, cost);
    }
    validate(rule, ruleName, key, 0);
    return store.tryAcquire(rule, key, cost);
  }

  @Override
  public CompletionStage<Decision> acquireAsync(Request request) {
    Resolved r;
    try {
      r = resolve(request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return decideAsync(r);
  }

  @Override
  public CompletionStage<Decision> acquireAsync(OperationRequest request) {
    Resolved r;
    try {
      r = resolve(request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return decideAsync(r);
  }

  private CompletionStage<Decision> decideAsync(Resolved r) {
    Request request = r.request;
    long start = listeners.length == 0 ? 0 : System.nanoTime();
    if (r.skipStore || store.isLocal()) {
      Decision d = assemble(r, r.skipStore ? List.of() : store.decideSync(r.batch), false);
      notify(request, d, start);
      return CompletableFuture.completedFuture(d);
    }
    CompletableFuture<List<ItemDecision>> stage;
    try {
      // A copy, so that the timeout completes the caller's stage and never the store's own
      // future, whose completion frees the in-flight slot.
      stage = callStore(r.batch).copy();
    } catch (RuntimeException e) {
      // A store that fails before returning a stage has failed all the same: failure modes decide.
      stage = CompletableFuture.failedFuture(e);
    }
    // orTimeout arms one task on the JDK's shared delay scheduler (a single thread for the whole
    // JVM), cancelled when the store answers: no thread per call.
    return stage
        .orTimeout(storeTimeoutMillis, TimeUnit.MILLISECONDS)
        .handle((items, err) -> {
          Decision d = err == null ? assemble(r, items, false) : degrade(r, err);
          notify(request, d, start);
          return d;
        });
  }

  /**
   * As {@code acquireAsync(Request.of(rule, key, cost)).thenApply(Decision::allowed)}, with the
   * same validation, timeout, in-flight bound and failure modes, but without a decision where
   * nobody reads one: without listeners, the store answers the boolean itself, and on a local
   * store the answer is one of two shared completed stages. Unknown and shaping rules, and
   * limiters with listeners, take the interface's general path.
   */
  @Override
  public CompletionStage<Boolean> tryAcquireAsync(String ruleName, String key, long cost) {
    Rule rule = rules.get(ruleName);
    if (rule == null || rule.algorithm() == Algorithm.LEAKY_BUCKET || listeners.length != 0 || hasPolicies(rule)) {
      return RateLimiter.super.tryAcquireAsync(ruleName, key, cost);
    }
    ResolvedItem item;
    try {
      java.util.Objects.requireNonNull(key, "key");
      if (cost < 0) {
        throw InvalidCostException.negative(ruleName, cost);
      }
      validate(rule, ruleName, key, 0);
      if (store.isLocal()) {
        return store.tryAcquire(rule, key, cost) ? ADMITTED : REFUSED;
      }
      item = resolveItem(rule, key, cost);
      // The store's boolean answer has no retry time to keep, but a denial already kept answers.
      if (denials != null && denials.check(rule, key, cost, item.windows(), ticker.nowMicros()) != null) {
        return REFUSED;
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Boolean> stage;
    try {
      // A copy, as in acquireAsync: the timeout must not complete the store's own future.
      stage = bounded(() -> store.tryAcquireAsync(item)).copy();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage
        .orTimeout(storeTimeoutMillis, TimeUnit.MILLISECONDS)
        .handle((admitted, err) -> {
          if (err == null) {
            return admitted;
          }
          // Only now is the request needed, for failure modes and the local fallback.
          Batch batch = new Batch(List.of(item), Request.STORE_CLOCK);
          return degrade(new Resolved(Request.of(ruleName, key, cost), batch, null, null, NO_START), err).allowed();
        });
  }

  /**
   * Whether the boolean paths must take the general one: the rule has cached policies, or it
   * bans (a ban the store answers must be seen, to be cached).
   */
  private boolean hasPolicies(Rule rule) {
    return rule.ban() != null || policyCache.of(rule.name()) != null;
  }

  private CompletableFuture<List<ItemDecision>> callStore(Batch batch) {
    return bounded(() -> store.decide(batch));
  }

  /**
   * Calls the store, unless {@code maxInFlight} calls already wait for its answer: then the call
   * is not made and the returned stage has failed with {@link StoreOverloadedException}, so that
   * failure modes decide at once instead of adding to a queue that a slow store does not drain.
   *
   * <p>A slot is freed when the store answers or fails, not when its caller stops waiting: a call
   * that timed out may still sit in the client's queue or on the wire, and counts until the
   * client gives up on it (the Redis store's command timeout).
   */
  private <T> CompletableFuture<T> bounded(Supplier<CompletionStage<T>> storeCall) {
    if (inFlight.incrementAndGet() > maxInFlight) {
      inFlight.decrementAndGet();
      return CompletableFuture.failedFuture(new StoreOverloadedException(maxInFlight));
    }
    CompletableFuture<T> call;
    try {
      call = storeCall.get().toCompletableFuture();
    } catch (RuntimeException | Error e) {
      inFlight.decrementAndGet();
      throw e;
    }
    // A dependent of its own, never completed by anyone else, so that it always runs.
    call.whenComplete((answer, err) -> inFlight.decrementAndGet());
    return call;
  }

  /**
   * The store failed. An error of the request itself ({@link #isOutage}) is thrown as it is, after
   * listeners heard of it: no decision is made. On an outage each item follows its rule's failure
   * mode: closed items deny, open items allow, local items are decided together on the in-process
   * fallback with a share of their limits. The decision is marked degraded.
   *
   * <p>A request with an enforced closed item is denied whatever the others say, so its local
   * items are only looked at (cost 0), never consumed: a denial consumes nothing, degraded or not.
   */
  private Decision degrade(Resolved r, Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof TimeoutException && cause.getMessage() == null) {
      cause = new TimeoutException("the store did not answer within " + storeTimeoutMillis + " ms");
    }
    for (DecisionListener l : listeners) {
      try {
        l.onStoreError(r.request, cause);
      } catch (RuntimeException ignored) {
        // A listener must not change a decision.
      }
    }
    if (!isOutage(cause)) {
      throw (RuntimeException) cause;
    }
    List<ResolvedItem> items = r.batch.items();
    boolean closedDenies = false;
    for (ResolvedItem it : items) {
      closedDenies |= it.rule().failureMode() == FailureMode.CLOSED && !it.rule().shadow();
    }
    List<ResolvedItem> locals = new ArrayList<>();
    for (ResolvedItem it : items) {
      if (it.rule().failureMode() == FailureMode.LOCAL) {
        locals.add(new ResolvedItem(it.rule(), it.key(), closedDenies ? 0 : it.cost(), share(it.windows())));
      }
    }
    List<ItemDecision> localDecisions = locals.isEmpty()
        ? List.of()
        : local.decideSync(new Batch(locals, r.batch.timeMicros()));
    List<ItemDecision> out = new ArrayList<>(items.size());
    int li = 0;
    for (ResolvedItem it : items) {
      switch (it.rule().failureMode()) {
        case LOCAL -> {
          ItemDecision d = localDecisions.get(li++);
          out.add(d.cost() == it.cost() ? d : new ItemDecision(d.rule(), d.key(), it.cost(), d.allowed(), d.reason(),
              d.waitMs(), d.windows(), d.shadow()));
        }
        case OPEN -> out.add(new ItemDecision(it.rule().name(), it.key(), it.cost(), true, DenyReason.NONE, 0,
            List.of(), it.rule().shadow()));
        case CLOSED -> out.add(new ItemDecision(it.rule().name(), it.key(), it.cost(), false,
            DenyReason.STORE_UNAVAILABLE, 0, unknownWindows(it.windows()), it.rule().shadow()));
      }
    }
    return assemble(r, out, true);
  }

  /**
   * Refuses rules the store cannot decide, before any is in force (see {@link Store#check}), and
   * rules that ban or audit on a store that keeps no policies.
   */
  private static void check(Store store, PolicyRecords policyStore, RuleSet rules) {
    for (Rule r : rules.rules()) {
      store.check(r);
      if (policyStore == null && (r.ban() != null || r.audit() != null)) {
        throw new UnsupportedRuleException(r.name(), "rule '" + r.name() + "': " + store.describe()
            + " keeps no policies, so it cannot " + (r.ban() != null ? "ban keys" : "keep an audit"));
      }
    }
  }

  /**
   * Whether a store failure is an outage, which failure modes decide. A {@link StoreException} or
   * an {@link IllegalArgumentException} is the request's own: the store could not decide it and
   * would not the next time either, so admitting it (an {@code open} rule) would hide a broken
   * rule or key for good.
   */
  static boolean isOutage(Throwable cause) {
    return !(cause instanceof StoreException || cause instanceof IllegalArgumentException);
  }

  private static List<WindowState> unknownWindows(List<Window> ws) {
    List<WindowState> out = new ArrayList<>(ws.size());
    for (Window w : ws) {
      out.add(new WindowState(w.limit(), w.periodMillis(), 0, 0, 0, true));
    }
    return out;
  }

  private List<Window> share(List<Window> ws) {
    double share = localShare();
    if (share >= 1.0) {
      return ws;
    }
    List<Window> out = new ArrayList<>(ws.size());
    for (Window w : ws) {
      out.add(new Window(Math.max(1, (long) Math.floor(w.limit() * share)), w.period()));
    }
    return out;
  }

  /**
   * The share of each limit that {@code failure_mode: local} holds now: the one given, else 1 /
   * the instances last counted in the store (1 when the store counts none).
   */
  public double localShare() {
    if (!Double.isNaN(localShare)) {
      return localShare;
    }
    return fleet == null ? 1.0 : 1.0 / fleet.live();
  }

  private void notify(Request request, Decision d, long start) {
    if (listeners.length == 0) {
      return;
    }
    long nanos = System.nanoTime() - start;
    for (DecisionListener l : listeners) {
      try {
        l.onDecision(request, d, nanos);
      } catch (RuntimeException ignored) {
        // A listener must not change a decision.
      }
    }
  }

  @Override
  public Decision acquireBlocking(Request request, Duration timeout) throws InterruptedException {
    return blocking(() -> acquire(request), timeout);
  }

  /** Each retry resolves the operation again, with its attributes (audit values among them). */
  @Override
  public Decision acquireBlocking(OperationRequest request, Duration timeout) throws InterruptedException {
    return blocking(() -> acquire(request), timeout);
  }

  private Decision blocking(Supplier<Decision> attempt, Duration timeout) throws InterruptedException {
    long budget = timeout.toMillis();
    while (true) {
      Decision d = attempt.get();
      if (d.allowed()) {
        if (d.waitMs() > 0) {
          sleeper.sleep(d.waitMs());
        }
        return d;
      }
      long retry = d.retryAfterMs();
      if (retry == WindowState.NEVER || retry > budget || d.degraded() && retry == 0) {
        return d;
      }
      // Sleep exactly as long as the decision says; the retry is then expected to pass unless
      // other traffic took the room meanwhile.
      sleeper.sleep(retry);
      budget -= retry;
    }
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    try {
      validate(rules.get(rule), rule, key, 0);
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

  @Override
  public RuleSet rules() {
    return rules;
  }

  /**
   * @throws dev.sluice.UnsupportedRuleException if the store cannot decide a rule of {@code next}:
   *     the rules in force stay
   */
  @Override
  public synchronized void updateRules(RuleSet next) {
    check(store, policyStore, next);
    RuleSet before = rules;
    policyCache.rulesChanged(next);
    rules = next;
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
    this.recorder = r == null ? DenialRecorder.NONE : r;
  }

  /**
   * Refuses windows the store could not decide for {@code rule}, as if they were the rule's own (a
   * live limit's, or a request's own windows).
   *
   * @throws UnsupportedRuleException or IllegalArgumentException naming what is out of range
   */
  @Override
  public void checkWindows(Rule rule, List<Window> windows) {
    Rule copy = rule.toBuilder().windows(windows).build();
    if (rule.algorithm() == Algorithm.LEAKY_BUCKET) {
      long maxWait;
      try {
        maxWait = LeakyBucket.maxWaitMicros(copy, windows);
      } catch (ArithmeticException e) {
        maxWait = -1;
      }
      if (maxWait < 0) {
        throw new IllegalArgumentException("rule '" + rule.name() + "' is a leaky bucket: with these windows its"
            + " max_wait would be out of range");
      }
    }
    storeForChecks().check(copy);
  }

  TopOffenders topOffenders() {
    return topOffenders;
  }

  PolicyCache policyCache() {
    return policyCache;
  }

  Store storeForChecks() {
    return store;
  }

  /** The checks of {@code acquire} on a rule name and a key: the rule in force. */
  @Override
  public Rule validateKey(String ruleName, String key) {
    java.util.Objects.requireNonNull(key, "key");
    return validate(rules.get(ruleName), ruleName, key, 0);
  }

  public Store store() {
    return store;
  }

  @Override
  public void close() {
    // The poll stops first, so that no heartbeat of its follows the leave.
    policyCache.close();
    if (fleet != null) {
      fleet.leave(storeTimeoutMillis);
    }
    store.close();
    local.close();
  }
}
