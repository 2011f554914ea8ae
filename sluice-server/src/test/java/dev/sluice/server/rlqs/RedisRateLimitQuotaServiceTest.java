package dev.sluice.server.rlqs;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Rate Limit Quota Service on a real Redis server (started on a free port by the test kit):
 * the store counts on the server's clock, the service's TTLs and silences on the fake one.
 */
class RedisRateLimitQuotaServiceTest extends AbstractRateLimitQuotaServiceTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @Override
  protected Store newStore(FakeTicker ticker) {
    return RedisStore.connect(redis.get().uri());
  }
}
