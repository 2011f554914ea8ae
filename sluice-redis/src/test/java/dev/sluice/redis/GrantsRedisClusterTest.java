package dev.sluice.redis;

import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Takes and give-backs on a Cluster: one item is one slot, so each is one script on its shard. */
class GrantsRedisClusterTest extends GrantsRedisTestBase {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }
}
