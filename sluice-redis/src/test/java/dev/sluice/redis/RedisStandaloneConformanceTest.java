package dev.sluice.redis;

import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.conformance.WindowChangeConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The core conformance suite, unchanged, on Redis 7 standalone. */
class RedisStandaloneConformanceTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

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
  class WindowChanges extends WindowChangeConformanceTest {
    @Override
    protected Store newStore() {
      return sharedStore();
    }
  }

  @Nested
  class BansAndAudit extends RedisBansAndAuditConformance {
    @Override
    String uri() {
      return redis.get().uri();
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
