package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lease board on one Redis server. */
class RedisLeaseBoardStandaloneTest extends RedisLeaseBoardTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  Object commandFor(String key, String... args) {
    return redis.get().command(args);
  }
}
