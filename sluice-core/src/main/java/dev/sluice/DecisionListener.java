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
}
