package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.spring.annotation.SluiceRateLimitedAutoConfiguration;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code sluice.store} as a Redis URI, on a real Redis: the store runs on the Lettuce resources of
 * Boot's Redis support, and instances share one limit.
 */
class StarterOnRedisTest {
  private static Standalone redis;

  @BeforeAll
  static void startRedis() {
    redis = Standalone.start(Flavor.REDIS);
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  private ApplicationContextRunner app() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, SluiceAutoConfiguration.class,
            SluiceRateLimitedAutoConfiguration.class))
        .withPropertyValues("sluice.store=" + redis.uri(), "spring.data.redis.port=" + redis.port(),
            "sluice.rules=limits:\n  - name: per_user\n    config:\n      - {limit: 5, period: 3}\n");
  }

  @Test
  void theStoreRunsOnBootsClientResourcesAndInstancesShareTheLimit() {
    app().run(one -> app().run(two -> {
      assertThat(one).hasNotFailed();
      RedisStoreOpener opener = (RedisStoreOpener) one.getBean(StoreUris.RedisOpener.class);
      assertThat(opener.resources()).isSameAs(one.getBean(ClientResources.class));
      RateLimiter a = one.getBean(RateLimiter.class);
      RateLimiter b = two.getBean(RateLimiter.class);
      String key = "user:" + System.nanoTime();
      for (int i = 0; i < 5; i++) {
        assertThat((i % 2 == 0 ? a : b).acquire("per_user", key).allowed()).isTrue();
      }
      assertThat(a.acquire("per_user", key).allowed()).isFalse();
      assertThat(b.acquire("per_user", key).allowed()).isFalse();
    }));
  }
}
