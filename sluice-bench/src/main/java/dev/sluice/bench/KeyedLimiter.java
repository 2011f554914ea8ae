package dev.sluice.bench;

/**
 * The tiny facade every in-process contender is measured through: one decision for one key, cost
 * 1, on the contender's own clock. Implementations are thread-safe.
 */
public interface KeyedLimiter extends AutoCloseable {

  /** Whether one unit for {@code key} is admitted now; an admitted unit is consumed. */
  boolean tryAcquire(String key);

  @Override
  default void close() {}
}
