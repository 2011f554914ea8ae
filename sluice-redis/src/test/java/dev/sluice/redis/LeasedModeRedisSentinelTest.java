package dev.sluice.redis;

import dev.sluice.testkit.SentinelGroup;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leased mode on a Sentinel-managed master, reached through the sentinels. */
class LeasedModeRedisSentinelTest extends LeasedModeRedisTestBase {
  @RegisterExtension
  static final RedisExtension<SentinelGroup> redis = RedisExtension.sentinel(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }
}
