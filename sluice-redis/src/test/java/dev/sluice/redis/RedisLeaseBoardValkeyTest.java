package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lease board on one Valkey server. */
class RedisLeaseBoardValkeyTest extends RedisLeaseBoardTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.VALKEY);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  Object commandFor(String key, String... args) {
    return redis.get().command(args);
  }
}
