package dev.sluice.redis;

import dev.sluice.conformance.AddressRefusedAgainContract;
import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link AddressRefusedAgainContract} on a Redis store given to the builder, with the denial
 * cache on as it is by default: the script's denials must still reach the store to be counted.
 */
class AddressRefusedAgainOnRedisTest extends AddressRefusedAgainContract {
  private static Standalone server;

  @BeforeAll
  static void start() {
    server = Standalone.start(Flavor.REDIS);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Override
  protected RateLimiter limiter(RuleSet rules) {
    // The limiter closes its store.
    return Sluice.builder().rules(rules).store(RedisStore.connect(server.uri())).build();
  }
}
