package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.SentinelGroup;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Policy records on a Sentinel-managed master. */
class RedisPolicyStoreSentinelTest extends RedisPolicyStoreTestBase {
  @RegisterExtension
  static final RedisExtension<SentinelGroup> redis = RedisExtension.sentinel(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  Object commandFor(String key, String... args) {
    return redis.get().command(args);
  }
}
