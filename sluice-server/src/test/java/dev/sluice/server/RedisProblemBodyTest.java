package dev.sluice.server;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Problem bodies on a real Redis server; taking it down pauses the process, so that the store's
 * calls time out as they do for a server that stopped answering.
 */
class RedisProblemBodyTest extends AbstractProblemBodyTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  protected Store newStore() {
    return RedisStore.connect(redis.get().uri());
  }

  @Override
  protected void storeDown(boolean down) {
    if (down) {
      redis.get().pause();
    } else {
      redis.get().resume();
    }
  }
}
