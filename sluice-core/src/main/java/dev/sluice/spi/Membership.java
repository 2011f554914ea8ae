package dev.sluice.spi;

import java.util.concurrent.CompletionStage;

/**
 * The limiters sharing a store, counted through heartbeats in it, offered by
 * {@link Store#membership()}. A limiter on a remote store without it counts itself alone: {@code
 * failure_mode: local} then holds the whole of each limit unless a share is given.
 *
 * <p>Every stage completes within a bounded time, as {@link Store#decide}'s.
 */
public interface Membership {

  /**
   * Says that the limiter {@code instance} is alive, on the store's clock, and answers how many
   * instances are: those that said so within the last {@code ttlMillis} ms, this one included. The
   * share of each limit that {@code failure_mode: local} holds is 1 / that count.
   */
  CompletionStage<Integer> heartbeat(String instance, long ttlMillis);

  /** Says that the limiter {@code instance} is closing: it is no longer counted. */
  CompletionStage<Void> leave(String instance);
}
