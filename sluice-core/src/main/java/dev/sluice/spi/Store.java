package dev.sluice.spi;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.UnsupportedRuleException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Where limiter state lives and where decisions are made atomically. Implementations: the
 * memory store in {@code sluice-core}, the Redis store in {@code sluice-redis}.
 */
public interface Store extends AutoCloseable {

  /**
   * Decides {@code batch} atomically on the store's clock (or the batch's explicit time) and
   * returns one decision per item, in order. {@link ItemDecision#allowed()} tells whether the
   * item fits; consumption happened only if every non-shadow item fits.
   *
   * <p>A remote store must complete every stage it returns, with an answer or an error, within a
   * bounded time (a client command timeout): the limiter counts a call against its {@code
   * maxInFlight} bound until its stage completes, even after the caller stopped waiting.
   *
   * <p>How it fails tells the limiter what to do. A {@link StoreException} (or an {@link
   * IllegalArgumentException}) says the request itself cannot be decided — the store refused it,
   * its script failed — and fails the caller's request. Any other error is an outage (timeouts,
   * lost connections, a server that cannot take writes for now), and the rules' failure modes
   * decide.
   */
  CompletionStage<List<ItemDecision>> decide(Batch batch);

  /**
   * Refuses a rule this store cannot decide: some window of the rule or of one of its overrides
   * (or its {@code max_wait}) is beyond what the store supports. Called when rules are given to
   * the limiter (at build and on every {@code updateRules}) before they are put in force, so that
   * a rule is refused at once instead of failing every decision later. The default accepts
   * every rule.
   *
   * @throws UnsupportedRuleException naming the rule, the window and this store's maximum
   */
  default void check(Rule rule) {}

  /** The same as {@link #decide}, waiting for the answer. Synchronous stores override it. */
  default List<ItemDecision> decideSync(Batch batch) {
    return decide(batch).toCompletableFuture().join();
  }

  /**
   * The ticker a local store decides on, or null (the default) when it keeps its clock to itself.
   * A caller that needs the time of a decision for its own bookkeeping reads it once from this
   * ticker and hands it to {@link #decideAlone} and {@link #tryAcquire}: one clock read instead of
   * two. Such a time is the store's clock read by the caller, not an explicit time.
   */
  default Ticker ticker() {
    return null;
  }

  /**
   * The decision of a request of {@code cost} units of {@code rule} for {@code key} alone
   * (validated, as in a {@link ResolvedItem}, with the key's own windows and no audit value),
   * decided exactly as {@link #decideSync} decides a batch of that item, on the store's clock read
   * at {@code at}: a time just read from {@link #ticker()}, or {@link Request#STORE_CLOCK} for the
   * store to read it. Decisions are immutable, so a store may answer one it answered before when
   * every field of the new one would be equal: a key denied again and again then allocates
   * nothing. Synchronous stores override it.
   */
  default Decision decideAlone(Rule rule, String key, long cost, long at) {
    ResolvedItem item = new ResolvedItem(rule, key, cost, rule.windowsFor(key));
    return Decision.of(decideSync(new Batch(List.of(item), Request.STORE_CLOCK)), false);
  }

  /**
   * Decides as {@link #decideAlone}, and answers only whether the request is admitted (an item of
   * a shadow rule always is). Stores that can skip building the per-window report override it.
   */
  default boolean tryAcquire(Rule rule, String key, long cost, long at) {
    return decideAlone(rule, key, cost, at).allowed();
  }

  /**
   * Decides {@code item} alone on the store's clock, as {@link #decide} would decide a batch of
   * it, and answers only whether it is admitted (an item of a shadow rule always is). Fails as
   * {@link #decide} fails, and completes within the same bounded time. Stores that can skip
   * reading the per-window report override it.
   */
  default CompletionStage<Boolean> tryAcquireAsync(ResolvedItem item) {
    return decide(new Batch(List.of(item), Request.STORE_CLOCK)).thenApply(decided -> {
      ItemDecision d = decided.get(0);
      return d.allowed() || d.shadow();
    });
  }

  /** Whether {@link #decideSync} answers without I/O, so no timeout applies. */
  default boolean isLocal() {
    return false;
  }

  /** Forgets the state of {@code key} under the rule named {@code rule}. */
  CompletionStage<Void> reset(String rule, String key);

  /**
   * Told when the rules in force change: state of rules that changed or disappeared must not be
   * used for their new definition.
   */
  default void rulesChanged(RuleSet before, RuleSet after) {}

  /**
   * The policy records this store keeps (live limits, bans, lists, audit); empty by default, and a
   * limiter on such a store refuses rules that ban or audit. Asked once, when a limiter is built.
   */
  default Optional<PolicyRecords> records() {
    return Optional.empty();
  }

  /** The denial sketches this store keeps for the top offenders; empty by default. */
  default Optional<DenialSketches> sketches() {
    return Optional.empty();
  }

  /** The count of the limiters sharing this store, by heartbeats; empty by default. */
  default Optional<Membership> membership() {
    return Optional.empty();
  }

  /** Units taken from keys' exact state for leased mode, and given back; empty by default (leased rules refused). */
  default Optional<Grants> grants() {
    return Optional.empty();
  }

  /** The leader record, usage reports and sizes of leased mode; empty by default. */
  default Optional<LeaseBoard> leaseBoard() {
    return Optional.empty();
  }

  /** Whether the store is reachable. */
  CompletionStage<Boolean> ping();

  /** A description for logs; never contains a password. */
  String describe();

  @Override
  void close();
}
