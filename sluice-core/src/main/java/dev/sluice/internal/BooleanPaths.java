package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.InvalidCostException;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Ticker;
import dev.sluice.internal.policy.DenialCache;
import dev.sluice.internal.policy.DenialRecorder;
import dev.sluice.internal.policy.LocalItem;
import dev.sluice.internal.policy.PolicyCache;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@code tryAcquire(rule, key, cost)} without a decision where nobody reads one: without
 * listeners, the store answers the boolean itself, with the same validation, timeout, in-flight
 * bound and failure modes as the general path. Each method answers null when the request must
 * take the general path instead: an unknown or shaping rule (the interface's default rejects
 * them), listeners, or a rule the local steps may act on.
 */
final class BooleanPaths {
  /** tryAcquireAsync's answers on a local store: immutable through {@link CompletionStage}, so shared. */
  private static final CompletionStage<Boolean> ADMITTED = CompletableFuture.completedStage(Boolean.TRUE);
  private static final CompletionStage<Boolean> REFUSED = CompletableFuture.completedStage(Boolean.FALSE);

  private final Resolver resolver;
  private final Store store;
  private final StoreCall call;
  private final PolicyCache policies;
  /** Null when off. */
  private final DenialCache denials;
  private final Ticker ticker;
  private final Assemble assemble;
  private final LocalStage local;
  private final Degrade degrade;
  /** Whether listeners hear of decisions: then every request takes the general path. */
  private final boolean heard;
  /** Whether the store is local and decides on {@link #ticker}: see {@link #now}. */
  private final boolean sharedTicker;

  BooleanPaths(Resolver resolver, Store store, StoreCall call, PolicyCache policies, DenialCache denials, Ticker ticker,
      Assemble assemble, Degrade degrade, LocalStage local) {
    this.resolver = resolver;
    this.store = store;
    this.call = call;
    this.policies = policies;
    this.denials = denials;
    this.ticker = ticker;
    this.assemble = assemble;
    this.local = local;
    this.degrade = degrade;
    this.heard = assemble.heard();
    this.sharedTicker = store.isLocal() && store.ticker() == ticker;
  }

  /**
   * {@code acquire(rule, key, cost)} on a local store, when no local step acts on the rule nor
   * learns from the store, so that the store's decision of the one item is the request's: no
   * request, batch or resolved request is built around it. Null: the general path.
   */
  Decision acquire(String ruleName, String key, long cost) {
    Rule rule = resolver.rules().get(ruleName);
    if (rule == null || heard || !store.isLocal() || local.learnsFrom(rule) || local.acts(rule)) {
      return null;
    }
    checked(rule, ruleName, key, cost);
    long at = now();
    return assemble.alone(store.decideAlone(rule, key, cost, at), at);
  }

  /** On a local store only; null: the general path. */
  Boolean tryAcquire(String ruleName, String key, long cost) {
    Rule rule = fastRule(ruleName);
    if (rule == null || !store.isLocal()) {
      return null;
    }
    checked(rule, ruleName, key, cost);
    long at = now();
    return counted(store.tryAcquire(rule, key, cost, at), rule, key, at);
  }

  /** On a local store, one of two shared completed stages; null: the general path. */
  CompletionStage<Boolean> tryAcquireAsync(String ruleName, String key, long cost) {
    Rule rule = fastRule(ruleName);
    if (rule == null) {
      return null;
    }
    ResolvedItem item;
    try {
      checked(rule, ruleName, key, cost);
      if (store.isLocal()) {
        long at = now();
        return counted(store.tryAcquire(rule, key, cost, at), rule, key, at) ? ADMITTED : REFUSED;
      }
      item = Resolver.resolveItem(rule, key, cost);
      // The store's boolean answer has no retry time to keep, but a denial already kept answers.
      if (denials != null) {
        long now = ticker.nowMicros();
        if (denials.check(rule, key, cost, item.windows(), now) != null) {
          return counted(false, rule, key, now) ? ADMITTED : REFUSED;
        }
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return call.tryAcquireAsync(item).handle((admitted, err) -> {
      if (err == null) {
        return counted(admitted, rule, key, DenialRecorder.UNREAD);
      }
      // Only now is the request needed, for failure modes and the local fallback.
      Resolved r = new Resolved(Request.of(ruleName, key, cost), new Batch(List.of(item), Request.STORE_CLOCK), null,
          null, LocalItem.NO_START);
      return assemble.decision(r, degrade.decide(r, err), true).allowed();
    });
  }

  /**
   * {@code admitted}, after telling the top offenders of a denial at {@code atMicros} (see
   * {@link #now}), as the general path does.
   */
  private boolean counted(boolean admitted, Rule rule, String key, long atMicros) {
    if (!admitted) {
      assemble.denied(rule.name(), key, atMicros);
    }
    return admitted;
  }

  /**
   * The time of a decision on a local store, read once for the store and the top offenders when
   * the store decides on the limiter's own ticker (as the one {@code Sluice.builder()} makes does);
   * else {@link Request#STORE_CLOCK}, for each to read its own (to the recorder, it is
   * {@link DenialRecorder#UNREAD}).
   */
  private long now() {
    return sharedTicker ? ticker.nowMicros() : Request.STORE_CLOCK;
  }

  /**
   * The rule in force if the boolean path may take it: known, not shaping, no listeners, no
   * cached policies nor a ban (a ban the store answers must be seen, to be cached), not a shadow
   * rule (whose denials, answered as admissions here, the top offenders must count), and not a
   * leased rule (its step answers first).
   */
  private Rule fastRule(String ruleName) {
    Rule rule = resolver.rules().get(ruleName);
    if (rule == null || rule.algorithm() == Algorithm.LEAKY_BUCKET || heard || rule.ban() != null || rule.shadow()
        || rule.lease() != null || policies.of(rule.name()) != null) {
      return null;
    }
    return rule;
  }

  /** The checks of {@code Item} and {@link Resolver#validate}, in their order. */
  private void checked(Rule rule, String ruleName, String key, long cost) {
    Objects.requireNonNull(key, "key");
    if (cost < 0) {
      throw InvalidCostException.negative(ruleName, cost);
    }
    resolver.validate(rule, ruleName, key, 0);
  }
}
