package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.SentinelGroup;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lease board on a Sentinel-managed master, reached through the sentinels. */
class RedisLeaseBoardSentinelTest extends RedisLeaseBoardTestBase {
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
