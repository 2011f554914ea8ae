package dev.sluice.server;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leases through the service on a real Redis, each other instance with a connection of its own. */
class RedisLeasesServiceTest extends AbstractLeasesServiceTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  protected Store newStore() {
    return RedisStore.connect(redis.get().uri());
  }

  @Override
  protected Store sameStateAs(Store serviceStore) {
    return RedisStore.connect(redis.get().uri());
  }
}
