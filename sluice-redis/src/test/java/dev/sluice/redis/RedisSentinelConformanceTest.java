package dev.sluice.redis;

import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.SentinelGroup;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The core conformance suite, unchanged, on a Redis 7 master, replica and three Sentinels: limiters on one group included. */
class RedisSentinelConformanceTest {
  @RegisterExtension
  static final RedisExtension<SentinelGroup> redis = RedisExtension.sentinel(Flavor.REDIS);

  static Store sharedStore() {
    return SharedStore.of(redis.get().uri());
  }

  @Nested
  class AlgorithmTraces extends AlgorithmTracesConformanceTest {
    @Override
    protected Store newStore() {
      return sharedStore();
    }
  }

  @Nested
  class KeysAndRules extends KeysAndRulesConformanceTest {
    @Override
    protected Store newStore() {
      return sharedStore();
    }
  }

  @Nested
  class Transactions extends TransactionConformanceTest {
    @Override
    protected Store newStore() {
      return sharedStore();
    }
  }

  @Nested
  class Concurrency extends RedisConcurrencyConformance {
    @Override
    String uri() {
      return redis.get().uri();
    }
  }
}
