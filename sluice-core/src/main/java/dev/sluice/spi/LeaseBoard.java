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
  /** The most bytes of an instance's id, in UTF-8. */
  int MAX_INSTANCE_BYTES = 256;
  /** The longest term or time to live: a day, far above any lease length, and times stay exact. */
  long MAX_MILLIS = 86_400_000;

  /**
   * Refuses an id no store keeps: empty, longer than {@link #MAX_INSTANCE_BYTES}, or {@code @}
   * (reserved on every store alike: the Redis store keeps the last publish's record under it).
   */
  static void checkInstance(String instance) {
    java.util.Objects.requireNonNull(instance, "instance");
    int n = instance.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    if (n == 0 || n > MAX_INSTANCE_BYTES) {
      throw new IllegalArgumentException("an instance id is 1 to " + MAX_INSTANCE_BYTES + " bytes, was " + n);
    }
    if (instance.equals("@")) {
      throw new IllegalArgumentException("the instance id \"@\" is reserved (the sizes' publish record)");
    }
  }

  /** Refuses a report or sizes over {@link #MAX_ENTRY_BYTES}, naming {@code what}. */
  static void checkEntry(byte[] data, String what) {
    if (data.length > MAX_ENTRY_BYTES) {
      throw new IllegalArgumentException("the " + what + " is " + data.length + " bytes, over the limit of "
          + MAX_ENTRY_BYTES + " bytes (LeaseBoard.MAX_ENTRY_BYTES)");
    }
  }

  /** Refuses a term or time to live outside 1 ms to {@link #MAX_MILLIS}, naming {@code what}. */
  static void checkMillis(long millis, String what) {
    if (millis < 1 || millis > MAX_MILLIS) {
      throw new IllegalArgumentException("the " + what + " must be 1 to " + MAX_MILLIS + " ms (a day), was " + millis);
    }
  }

  /**
   * Campaigns for leadership, or renews it: if no leader's term is running, or it is {@code
   * instance}'s own, {@code instance} leads until now + {@code termMillis}, with a new token when
   * it did not lead already (tokens only grow). Answers the leader in force after the call.
   */
  CompletionStage<Leader> campaign(String instance, long termMillis);

  /**
   * The leader in force, read without campaigning or reporting: nothing is written, so an
   * operator's look at the board neither elects anyone nor counts as an instance.
   */
  CompletionStage<Leader> leader();

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
