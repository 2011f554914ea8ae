package dev.sluice.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The policies kept in the store beside the rules: live limits, bans, access lists, and what was
 * recorded about keys (who consumed them, who was denied most). On Redis they are shared by every
 * instance on that Redis; each instance applies a change made through any of them within a second
 * ({@link RateLimiter#policies()}).
 *
 * <p>Every method validates before it changes anything: an unknown rule completes the stage with
 * {@link UnknownRuleException}, a bad key with {@link InvalidKeyException}, any other bad argument
 * (an unknown tier, windows the store cannot decide, a malformed list entry, an expiry in the
 * past, a page size out of range) with {@link IllegalArgumentException} naming it.
 */
public interface Policies {

  /** Most entries one page may hold. */
  int MAX_PAGE = 1000;

  /** Gives {@code key} under {@code rule} the live limit {@code limit}, replacing any it had. */
  CompletionStage<Void> setLimit(String rule, String key, LiveLimit limit);

  /** The live limit of {@code key} under {@code rule}, if it has one. */
  CompletionStage<Optional<LiveLimit>> limit(String rule, String key);

  /** Removes the live limit of {@code key}; whether it had one. */
  CompletionStage<Boolean> removeLimit(String rule, String key);

  /**
   * Live limits in key order: of {@code rule} (or of every rule, ordered by rule then key, when
   * null), after the cursor {@code after} (null: from the start), at most {@code count}.
   */
  CompletionStage<Page<KeyLimit>> limits(String rule, String after, int count);

  /** Bans {@code key} under {@code rule} until {@code until}, replacing any ban it had. */
  CompletionStage<Void> ban(String rule, String key, Instant until);

  /** The ban in force on {@code key} under {@code rule}, if any (automatic or manual). */
  CompletionStage<Optional<Ban>> ban(String rule, String key);

  /** Lifts the ban on {@code key}, automatic or manual; whether there was one. */
  CompletionStage<Boolean> unban(String rule, String key);

  /** Bans in force, paged as {@link #limits}. */
  CompletionStage<Page<Ban>> bans(String rule, String after, int count);

  /**
   * Adds {@code entry} (see {@link ListKind}) to the run-time {@code kind} list of {@code rule}.
   * Entries from the configuration are not changed by this interface.
   */
  CompletionStage<Void> addToList(ListKind kind, String rule, String entry);

  /** Removes a run-time entry; whether it was there. */
  CompletionStage<Boolean> removeFromList(ListKind kind, String rule, String entry);

  /** Run-time entries of a list, in order, paged as {@link #limits}. */
  CompletionStage<Page<String>> list(ListKind kind, String rule, String after, int count);

  /**
   * Run-time entries of the {@code kind} lists of every rule, ordered by rule then entry, after
   * the cursor {@code after} (a page's {@code next}; null: from the start), at most {@code count}.
   */
  CompletionStage<Page<ListEntry>> lists(ListKind kind, String after, int count);

  /**
   * The last distinct values of the rule's audit attribute that consumed {@code key}, newest
   * first (empty when the rule keeps no audit or nothing was recorded).
   */
  CompletionStage<List<String>> audit(String rule, String key);

  /**
   * The most denied keys of {@code rule} across every instance over the last {@code last}
   * (whole minutes, 1 to 60), most denied first, at most {@code count}.
   */
  CompletionStage<List<Offender>> top(String rule, Duration last, int count);
}
