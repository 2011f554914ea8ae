package dev.sluice.spi;

import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Where the instances of a fleet leasing units (leased mode, see docs/scaling.md) meet: the leader
 * record with its fencing token, each instance's last usage report, and the sizes the leader
 * publishes per instance; offered by {@link Store#leaseBoard()}. Reports and sizes are opaque
 * bytes here: their format is the limiter's. Every time is the store's clock, in milliseconds.
 *
 * <p>Every stage completes within a bounded time, as {@link Store#decide}'s.
 */
public interface LeaseBoard {
  /** The most bytes one report or one instance's sizes may hold. */
  int MAX_ENTRY_BYTES = 8 * 1024;

  /**
   * Campaigns for leadership, or renews it: if no leader's term is running, or it is {@code
   * instance}'s own, {@code instance} leads until now + {@code termMillis}, with a new token when
   * it did not lead already (tokens only grow). Answers the leader in force after the call.
   */
  CompletionStage<Leader> campaign(String instance, long termMillis);

  /** Ends {@code instance}'s term at once if it leads with {@code token}; otherwise changes nothing. */
  CompletionStage<Void> resign(String instance, long token);

  /**
   * Stores {@code report} as {@code instance}'s last (replacing the one before), kept for
   * {@code ttlMillis}, and answers what the instance needs back: the sizes last published for it
   * (empty if none or expired), the leader in force, and how many instances have a report kept.
   *
   * @throws IllegalArgumentException (failing the stage) if the report exceeds {@link #MAX_ENTRY_BYTES}
   */
  CompletionStage<ReportAnswer> report(String instance, byte[] report, long ttlMillis);

  /** Every instance's kept report, by instance, at most {@code maxBytes} of them in all (the rest left out). */
  CompletionStage<Map<String, byte[]>> reports(long maxBytes);

  /**
   * Publishes sizes per instance, kept for {@code ttlMillis}, atomically with a check that
   * {@code instance} leads with {@code token} and its term is running; if not, nothing is written
   * and the answer is false (fenced: the caller no longer leads).
   */
  CompletionStage<Boolean> publish(String instance, long token, Map<String, byte[]> sizes, long ttlMillis);

  /**
   * The leader record.
   *
   * @param instance the leading instance, null when none leads
   * @param token its fencing token, 0 when none leads
   * @param untilMillis when its term ends, on the store's clock
   * @param nowMillis the store's clock when answered
   */
  record Leader(String instance, long token, long untilMillis, long nowMillis) {}

  /**
   * A report's answer.
   *
   * @param sizes the sizes published for the instance, empty if none
   * @param publishedAtMillis when they were published (store clock), 0 if none
   * @param leader the leader in force
   * @param instances instances with a report kept, the caller included
   */
  record ReportAnswer(byte[] sizes, long publishedAtMillis, Leader leader, int instances) {}
}
