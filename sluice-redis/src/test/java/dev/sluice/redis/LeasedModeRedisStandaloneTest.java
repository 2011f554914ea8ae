package dev.sluice.redis;

import dev.sluice.testkit.Standalone;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leased mode on one server. */
class LeasedModeRedisStandaloneTest extends LeasedModeRedisTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }
}
