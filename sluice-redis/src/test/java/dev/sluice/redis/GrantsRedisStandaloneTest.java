package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

class GrantsRedisStandaloneTest extends GrantsRedisTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }
}
