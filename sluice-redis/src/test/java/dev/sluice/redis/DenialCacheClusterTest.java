package dev.sluice.redis;

import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

class DenialCacheClusterTest extends DenialCacheTestBase {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  List<String> commandStats() {
    return redis.get().commandOnAll("INFO", "commandstats").stream().map(String::valueOf).toList();
  }
}
