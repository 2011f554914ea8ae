package dev.sluice.redis;

import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.conformance.WindowChangeConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Cluster;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The core conformance suite, unchanged, on a Redis 7 Cluster of three masters. */
class RedisClusterConformanceTest {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

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

    /** A request across shards counts its denials toward bans once every shard has answered. */
    @Override
    protected boolean bansFromTheDenialThatReachesTheThreshold() {
      return false;
    }
  }
}
