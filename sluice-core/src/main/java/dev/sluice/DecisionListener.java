package dev.sluice;

/**
 * Hooks for metrics and logs. Every method has a no-op default, so adding an event breaks
 * nobody. Called on the deciding thread: keep them fast and never throw.
 */
public interface DecisionListener {

  /** After every decision; {@code storeNanos} is the time spent in the store. */
  default void onDecision(Request request, Decision decision, long storeNanos) {}

  /**
   * When a store call failed or timed out. On an outage failure modes decided instead, and
   * {@link #onDecision} follows with a degraded decision; on a {@link StoreException} or an
   * {@link IllegalArgumentException} (the store could not decide the request itself) the request
   * failed with that error and no decision follows.
   */
  default void onStoreError(Request request, Throwable error) {}

  /**
   * When the limiter denied an item of {@code rule} for {@code key} without calling the store,
   * because the store denied it moments before and its cost cannot fit yet (the denial cache of a
   * remote store). {@link #onDecision} follows with the decision, as for any other.
   */
  default void onCachedDenial(String rule, String key) {}

  /**
   * When the limiter met a problem with its policies that a request can cause and that it logs
   * at most once every 10 s per kind: {@code ban_not_recorded} (an automatic ban's record could
   * not be written to the store), {@code cache_full} (a record left out of this limiter's cache,
   * which is at its bound), {@code record_unreadable} (a record left out because it could not be
   * read), {@code read_failed} (reading the memory store's policies failed). Called for every one,
   * logged or not.
   */
  default void onPolicyWarning(String kind) {}

  /**
   * When the store's policies were found reset (its version went back: a Redis restarted empty or
   * flushed) and records this limiter held are gone: {@code count} of {@code kind} ({@code limit},
   * {@code ban}, {@code list_entry}). Called once per kind and reset.
   */
  default void onPolicyRecordsLost(String kind, long count) {}

  /**
   * Leased mode: units of {@code rule} taken from the store for this instance to admit locally
   * ({@code units} granted, possibly 0 when none fit), or given back unused ({@link
   * #onLeaseGiveBack}). Called on the store client's threads.
   */
  default void onLeaseTake(String rule, long units) {}

  /** Leased mode: {@code units} of {@code rule} given back to the store unused. */
  default void onLeaseGiveBack(String rule, long units) {}

  /**
   * Leased mode, once per report interval while the limiter holds leased keys: how many keys it
   * holds and the units it holds unused in all (its share of the over-admission bound).
   */
  default void onLeasesHeld(int keys, long units) {}

  /**
   * Leased mode: this limiter became the leader that sizes every instance's leases ({@code
   * leads} true), or stopped being it (deposed, resigned, or its campaign failed).
   */
  default void onLeadership(boolean leads) {}

  /** Leased mode, on the leader: sizes for {@code keys} keys published to the instances. */
  default void onLeaseRebalance(int keys) {}
}
