package dev.sluice;

import dev.sluice.policy.Policies;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Decides requests against a set of rules, each request as one transaction. Thread-safe.
 * Obtain one from {@link Sluice#builder()}.
 */
public interface RateLimiter extends AutoCloseable {

  /**
   * Decides {@code request} and waits for the answer.
   *
   * @throws UnknownRuleException if an item names a rule that is not in force
   * @throws InvalidKeyException if an item's key is empty, not valid Unicode, or longer than the
   *     configured maximum (512 UTF-8 bytes by default)
   * @throws InvalidCostException if the costs of a repeated item add up to more than
   *     {@link Long#MAX_VALUE} (a negative cost is refused when the {@link Item} is made)
   * @throws StoreException if the store could not decide the request for a reason that is not an
   *     outage (a script error, a key of another type): failure modes apply to outages only
   */
  Decision acquire(Request request);

  /**
   * Decides an operation request: the items its operation makes of its attributes under the rules
   * in force ({@link RuleSet#resolve}), as one request, all or nothing. The decision lists those
   * items.
   *
   * @throws UnknownOperationException if no operation in force has the request's name
   * @throws MissingAttributeException if an item that applies needs an attribute the request lacks
   * @throws InvalidAttributeException if a typed attribute's value is not of its type
   * @throws InvalidKeyException if a key made from the attributes is too long or not valid Unicode
   * @throws InvalidCostException if the request's cost times an item's exceeds {@link Long#MAX_VALUE}
   * @throws StoreException as {@link #acquire(Request)}
   */
  default Decision acquire(OperationRequest request) {
    return acquire(rules().resolve(request));
  }

  /**
   * {@link #acquire(OperationRequest)} without blocking the caller; its exceptions complete the
   * stage exceptionally.
   */
  default CompletionStage<Decision> acquireAsync(OperationRequest request) {
    Request r;
    try {
      r = rules().resolve(request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return acquireAsync(r);
  }

  /**
   * Whether an operation request is admitted: {@code acquire(request).allowed()}.
   *
   * @throws IllegalArgumentException as {@link #acquire(OperationRequest)}, and if an item that
   *     applies is of a {@code leaky_bucket} rule (see {@link #tryAcquire(String, String)})
   */
  default boolean tryAcquire(OperationRequest request) {
    RuleSet rs = rules();
    Request r = rs.resolve(request);
    for (Item it : r.items()) {
      Rule rule = rs.get(it.rule());
      if (rule != null && rule.algorithm() == Algorithm.LEAKY_BUCKET) {
        throw waitWouldBeLost(it.rule());
      }
    }
    return acquire(r).allowed();
  }

  /**
   * {@link #acquireBlocking(Request, Duration)} for an operation request. The limiter resolves it
   * again on each try, with its attributes, so that what the store records of them (a rule's
   * {@link AuditPolicy}) is recorded whichever try is admitted; this default resolves it once.
   */
  default Decision acquireBlocking(OperationRequest request, Duration timeout) throws InterruptedException {
    return acquireBlocking(rules().resolve(request), timeout);
  }

  /** {@code acquire(Request.of(rule, key))}. */
  default Decision acquire(String rule, String key) {
    return acquire(Request.of(rule, key));
  }

  /** {@code acquire(Request.of(rule, key, cost))}. */
  default Decision acquire(String rule, String key, long cost) {
    return acquire(Request.of(rule, key, cost));
  }

  /**
   * Whether one unit of {@code rule} for {@code key} is admitted: {@code acquire(rule,
   * key).allowed()}, consuming exactly as it does, for callers that need no explanation. On the
   * memory store it skips building the per-window report.
   *
   * @throws IllegalArgumentException as {@link #acquire(Request)}, and for a {@code leaky_bucket}
   *     rule, whose admitted requests may have to wait: use {@link #acquire} or
   *     {@link #acquireBlocking} to learn the wait
   * @throws StoreException as {@link #acquire(Request)}
   */
  default boolean tryAcquire(String rule, String key) {
    return tryAcquire(rule, key, 1);
  }

  /** {@link #tryAcquire(String, String)} for {@code cost} units. */
  default boolean tryAcquire(String rule, String key, long cost) {
    Rule r = rules().get(rule);
    if (r != null && r.algorithm() == Algorithm.LEAKY_BUCKET) {
      throw waitWouldBeLost(rule);
    }
    return acquire(rule, key, cost).allowed();
  }

  /**
   * {@link #tryAcquire(String, String)} without blocking the caller: whether one unit of {@code
   * rule} for {@code key} is admitted, consuming exactly as {@code acquireAsync} does, with the
   * same failure modes, store timeout and in-flight bound. For callers that keep many decisions in
   * flight and need no explanation: on the Redis store it skips reading the per-window report.
   *
   * <p>Never throws: what {@link #tryAcquire(String, String)} throws completes the stage
   * exceptionally instead ({@link IllegalArgumentException} for an unknown rule, a bad key or
   * cost, a {@code leaky_bucket} rule; {@link StoreException} for a request the store could not
   * decide for a reason that is not an outage).
   */
  default CompletionStage<Boolean> tryAcquireAsync(String rule, String key) {
    return tryAcquireAsync(rule, key, 1);
  }

  /** {@link #tryAcquireAsync(String, String)} for {@code cost} units. */
  default CompletionStage<Boolean> tryAcquireAsync(String rule, String key, long cost) {
    Request request;
    try {
      Rule r = rules().get(rule);
      if (r != null && r.algorithm() == Algorithm.LEAKY_BUCKET) {
        throw waitWouldBeLost(rule);
      }
      request = Request.of(rule, key, cost);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return acquireAsync(request).thenApply(Decision::allowed);
  }

  private static IllegalArgumentException waitWouldBeLost(String rule) {
    return new IllegalArgumentException("rule '" + rule + "' is a leaky_bucket rule: an admitted request may have "
        + "to wait, which tryAcquire cannot tell; use acquire or acquireBlocking");
  }

  /**
   * Decides {@code request} without blocking the caller. Validation errors complete the stage
   * exceptionally with the exceptions {@link #acquire(Request)} throws for them (all of them
   * {@link IllegalArgumentException}s), a request the store could not decide (not an outage)
   * with {@link StoreException}.
   */
  CompletionStage<Decision> acquireAsync(Request request);

  /**
   * Decides {@code request}, waiting if that gets it admitted within {@code timeout}: on a
   * denial it sleeps exactly the decision's {@code retryAfterMs} and tries again (no polling),
   * and on an admitted shaping decision it sleeps its {@code waitMs} before returning. Returns
   * the last decision: allowed, or denied when the next retry would pass the timeout.
   */
  Decision acquireBlocking(Request request, Duration timeout) throws InterruptedException;

  /**
   * Forgets the state of {@code key} under {@code rule}. The stage fails with
   * {@link UnknownRuleException} or {@link InvalidKeyException} as {@link #acquire(Request)} would.
   */
  CompletionStage<Void> reset(String rule, String key);

  /**
   * Live limits, bans, access lists, audit and top offenders, kept in the store (shared by every
   * instance on a shared store).
   *
   * @throws UnsupportedOperationException if the limiter's store keeps no policies
   */
  default Policies policies() {
    throw new UnsupportedOperationException("this limiter keeps no policies");
  }

  /**
   * The limiters sharing this one's store, read from their heartbeats in it: how many are live,
   * this limiter's id, and the {@code max} heard most recently. A limiter whose store is not shared
   * (the memory store) or keeps no heartbeats is alone: it answers itself. Reading writes nothing.
   * The stage fails with {@link IllegalArgumentException} if {@code max} is not from 1 to
   * {@link FleetView#MAX_LISTED}, or with the store's error.
   *
   * @throws UnsupportedOperationException if this limiter does not know its fleet (a client of the
   *     service)
   */
  default CompletionStage<FleetView> fleet(int max) {
    throw new UnsupportedOperationException("this limiter does not know its fleet");
  }

  /** The rules in force. */
  RuleSet rules();

  /**
   * Replaces the rules in force atomically. Rules whose definition did not change keep their
   * state; changed and removed rules lose theirs.
   *
   * @throws UnsupportedRuleException if the store cannot decide one of the rules (a window beyond
   *     its maximum): nothing changes then, the rules in force stay
   */
  void updateRules(RuleSet rules);

  /** Whether the store answers (for readiness probes). */
  CompletionStage<Boolean> ping();

  @Override
  void close();
}
