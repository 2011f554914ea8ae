package dev.sluice.bench.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A Redis-backed limiter measured by {@link dev.sluice.bench.RedisLoad}, deciding the rule
 * 20/60s + 5/3s (or what of it the library can express) for a key, cost 1.
 */
public interface RedisContender extends AutoCloseable {

  /** The rule as this contender enforces it, for the report. */
  String ruleDescription();

  /** Work before the measured run that an application does once per key (none for most). */
  default void prepare(List<String> keys) {}

  /** Decides one unit for {@code key}: true if admitted. */
  CompletionStage<Boolean> acquire(String key);

  /** A SCAN pattern matching every Redis key that holds state for {@code key} and no other. */
  String redisKeyPattern(String key);

  @Override
  void close();
}
