package dev.sluice.spi;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The policies a store keeps beside its counters: {@link PolicyRecord}s (live limits, bans,
 * access-list entries) under a version that every change increases, so that each instance reads
 * what changed instead of everything, and the bounded records about keys that decisions leave
 * (audit, denial sketches). On a shared store every instance sees the same policies.
 *
 * <p>The decisions' side of bans and audit is {@link Store#decide}'s: for a rule with a
 * {@link dev.sluice.BanPolicy} it counts denials per key and starts a ban, answering
 * {@link dev.sluice.DenyReason#BANNED} with the time left while one lasts; for an item with an
 * {@link ResolvedItem#audit()} value it records the value when the item is consumed.
 *
 * <p>Every stage completes within a bounded time, as {@link Store#decide}'s.
 */
public interface PolicyStore {

  /** Most records one page returns. */
  int MAX_PAGE = 1000;

  /**
   * Puts {@code record}, replacing the record of the same kind, rule and key; returns the version
   * after the change. A {@link PolicyKind#BAN} record also bans the key in the store's decisions.
   */
  CompletionStage<Long> put(PolicyRecord record);

  /**
   * Removes a record; whether there was one (not expired). Removing a {@link PolicyKind#BAN} also
   * lifts the key's ban in the store's decisions, and forgets its counted denials, whether or not
   * a record existed.
   */
  CompletionStage<Boolean> remove(PolicyKind kind, String rule, String key);

  /** The record of that kind, rule and key, unless absent or expired. */
  CompletionStage<Optional<PolicyRecord>> get(PolicyKind kind, String rule, String key);

  /**
   * Records of {@code kind} ordered by rule then key (as UTF-8 bytes): of {@code rule} only
   * unless null, after {@code after} (a {@link PolicyRecord#cursor()}; null: from the start), at
   * most {@code count} (1 to {@link #MAX_PAGE}); expired records left out.
   */
  CompletionStage<List<PolicyRecord>> page(PolicyKind kind, String rule, String after, int count);

  /** The current version: 0 before any change. */
  CompletionStage<Long> version();

  /** What changed after {@code version}: at most a bounded number of changes, else incomplete. */
  CompletionStage<PolicyChanges> changesSince(long version);

  /**
   * The last distinct audit values recorded for {@code key} under {@code rule}, newest first;
   * empty if none (or the key's state expired).
   */
  CompletionStage<List<String>> audit(String rule, String key);

  /**
   * Merges an instance's denial sketch of {@code rule} for the minute {@code minute} (epoch
   * minutes) into the store's; the encoding and merge are those of the limiter's sketch. Kept for
   * at least an hour.
   */
  CompletionStage<Void> addDenials(String rule, long minute, String sketch);

  /** The store's denial sketches of {@code rule} for the minutes {@code from} to {@code to}, inclusive. */
  CompletionStage<List<String>> denials(String rule, long from, long to);

  /**
   * Says that the limiter {@code instance} is alive, on the store's clock, and answers how many
   * instances are: those that said so within the last {@code ttlMillis} ms, this one included. The
   * share of each limit that {@code failure_mode: local} holds is 1 / that count.
   */
  CompletionStage<Integer> heartbeat(String instance, long ttlMillis);

  /** Says that the limiter {@code instance} is closing: it is no longer counted. */
  CompletionStage<Void> leave(String instance);
}
