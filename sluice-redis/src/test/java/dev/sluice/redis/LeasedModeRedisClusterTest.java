package dev.sluice.redis;

import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leased mode on a Cluster: the key and the lease board in slots of their own. */
class LeasedModeRedisClusterTest extends LeasedModeRedisTestBase {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }
}
