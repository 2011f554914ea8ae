package dev.sluice.redis;

import dev.sluice.Ticker;
import dev.sluice.conformance.ConcurrencyConformanceTest;
import dev.sluice.spi.Store;
import io.lettuce.core.ScriptOutputType;
import java.nio.charset.StandardCharsets;
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

  /**
   * The server's {@code TIME}, which its scripts decide on: read before and after a decision, it
   * brackets the time the decision was made at. (A Cluster's nodes here share one machine's clock.)
   */
  @Override
  protected Ticker storeClock() {
    RedisStore s = ((SharedStore) store()).store();
    byte[] time = "local t = redis.call('TIME') return t[1] * 1000000 + t[2]".getBytes(StandardCharsets.UTF_8);
    return () -> s.link().<Long>eval(time, ScriptOutputType.INTEGER, new byte[0][], new byte[0][]).join();
  }
}
