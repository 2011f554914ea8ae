package dev.sluice.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

class DenialCacheStandaloneTest extends DenialCacheTestBase {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  List<String> commandStats() {
    return List.of(String.valueOf(redis.get().command("INFO", "commandstats")));
  }
}
