package dev.sluice.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;
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

  /**
   * The instances heard within the last {@code ttlMillis} ms, as {@link #heartbeat} counts them,
   * read without writing anything: how many there are, and the {@code max} heard most recently,
   * most recent first. A store that cannot list them fails the stage with
   * {@link UnsupportedOperationException} (the default).
   */
  default CompletionStage<Members> members(long ttlMillis, int max) {
    return CompletableFuture.failedFuture(new UnsupportedOperationException("this store lists no instances"));
  }

  /**
   * @param nowMillis the store's clock when it answered
   * @param count the instances heard within the ttl, those beyond {@code first} included
   * @param first at most the number asked for, most recently heard first
   */
  record Members(long nowMillis, int count, List<Member> first) {
    public Members {
      first = List.copyOf(first);
    }
  }

  /** An instance and its last heartbeat, on the store's clock. */
  record Member(String instance, long lastSeenMillis) {}
}
