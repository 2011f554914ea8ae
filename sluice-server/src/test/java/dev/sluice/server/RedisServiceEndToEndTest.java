package dev.sluice.server;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The end-to-end suite on a real Redis server (started on a free port by the test kit). */
class RedisServiceEndToEndTest extends AbstractServiceEndToEndTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  protected Store newStore() {
    return RedisStore.connect(redis.get().uri());
  }
}
