package dev.sluice.spi;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The policy records a store keeps beside its counters, offered by {@link Store#records()}:
 * {@link PolicyRecord}s (live limits, bans, access-list entries) under a version that every change
 * increases, so that each instance reads what changed instead of everything, and the audit values
 * that decisions leave. On a shared store every instance sees the same records.
 *
 * <p>The decisions' side of bans and audit is {@link Store#decide}'s: for a rule with a
 * {@link dev.sluice.BanPolicy} it counts denials per key and starts a ban, answering
 * {@link dev.sluice.DenyReason#BANNED} with the time left while one lasts; for an item with an
 * {@link ResolvedItem#audit()} value it records the value when the item is consumed. A limiter
 * refuses rules that ban or audit on a store without records.
 *
 * <p>Every stage completes within a bounded time, as {@link Store#decide}'s.
 */
public interface PolicyRecords {

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
}
