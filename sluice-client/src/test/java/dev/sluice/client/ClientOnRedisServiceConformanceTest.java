package dev.sluice.client;

import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ClientServiceConformance} on Redis 7 standalone, one service per test
 * ({@link ClientHarness#servicePerTest} says why).
 */
class ClientOnRedisServiceConformanceTest extends ClientServiceConformance {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  ClientHarness harness() {
    return ClientHarness.servicePerTest(() -> RedisStore.connect(redis.get().uri()));
  }

  @Nested
  class AlgorithmTraces extends ClientServiceConformance.AlgorithmTraces {}

  @Nested
  class KeysAndRules extends ClientServiceConformance.KeysAndRules {}

  @Nested
  class Transactions extends ClientServiceConformance.Transactions {}

  @Nested
  class WindowChanges extends ClientServiceConformance.WindowChanges {}
}
