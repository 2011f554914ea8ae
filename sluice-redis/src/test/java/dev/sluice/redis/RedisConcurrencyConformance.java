package dev.sluice.redis;

import dev.sluice.conformance.ConcurrencyConformanceTest;
import dev.sluice.spi.Store;
import java.time.Duration;

/**
 * The concurrency suite on a Redis store: the tests with several limiters give each its own
 * {@link RedisStore} (its own connection and policy poll) on the same server, as instances of a
 * fleet have.
 */
abstract class RedisConcurrencyConformance extends ConcurrencyConformanceTest {

  abstract String uri();

  @Override
  protected Store newStore() {
    return SharedStore.of(uri());
  }

  /** A TTL slack of a minute, as {@link SharedStore}'s: explicit times advance slower than real time here. */
  @Override
  protected Store storeForInstance(int instance) {
    return RedisStore.builder(uri()).ttlSlack(Duration.ofMinutes(1)).build();
  }
}
