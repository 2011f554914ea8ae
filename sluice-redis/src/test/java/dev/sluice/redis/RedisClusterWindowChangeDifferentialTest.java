package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Cluster;
import org.junit.jupiter.api.extension.RegisterExtension;

class RedisClusterWindowChangeDifferentialTest extends WindowChangeDifferentialBase {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  boolean cluster() {
    return true;
  }

  @Override
  void flush() {
    redis.get().flushAll();
  }
}
