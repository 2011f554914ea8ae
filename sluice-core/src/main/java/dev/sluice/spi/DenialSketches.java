package dev.sluice.spi;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The denial sketches a store keeps for the limiters sharing it, offered by
 * {@link Store#sketches()}: each instance hands in what it denied per rule and minute, and the
 * top offenders are read back merged across instances. A limiter on a store without them answers
 * no top offenders.
 *
 * <p>Every stage completes within a bounded time, as {@link Store#decide}'s.
 */
public interface DenialSketches {

  /**
   * Merges an instance's denial sketch of {@code rule} for the minute {@code minute} (epoch
   * minutes) into the store's; the encoding and merge are those of the limiter's sketch. Kept for
   * at least an hour.
   */
  CompletionStage<Void> addDenials(String rule, long minute, String sketch);

  /** The store's denial sketches of {@code rule} for the minutes {@code from} to {@code to}, inclusive. */
  CompletionStage<List<String>> denials(String rule, long from, long to);
}
