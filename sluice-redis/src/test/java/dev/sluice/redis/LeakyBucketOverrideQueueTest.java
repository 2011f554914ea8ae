package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.KeyOverride;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §3: a leaky bucket's max_wait defaults to P, "a queue of L". A key whose override gives it
 * other windows queues L of its own windows, not as many as the rule's default windows allow.
 */
class LeakyBucketOverrideQueueTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final long T0 = 1_800_000_000_000L;

  /** Requests at one instant admitted for a key of 60 per minute on a rule of 10 per second. */
  private static int admittedAtOnce(Store store, String name) {
    Rule rule = Rule.builder(name).algorithm(Algorithm.LEAKY_BUCKET).window(10, Duration.ofSeconds(1))
        .override(new KeyOverride(List.of("vip:*"), List.of(Window.perSeconds(60, 60)))).build();
    int admitted = 0;
    try (RateLimiter limiter = Sluice.builder().store(store).rules(rule).build()) {
      for (int i = 0; i < 70; i++) {
        admitted += limiter.acquire(Request.of(name, "vip:1").atMillis(T0)).allowed() ? 1 : 0;
      }
    }
    return admitted;
  }

  @Test
  void anOverriddenKeyQueuesTheLimitOfItsOwnWindowsByDefault() {
    String name = "lbq." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    // One at once and 60 queued, at most 60 s (the key's period) apart from now.
    assertThat(admittedAtOnce(MemoryStore.builder().ticker(new FakeTicker()).build(), name)).isEqualTo(61);
    assertThat(admittedAtOnce(RedisStore.connect(redis.get().uri()), name)).isEqualTo(61);
  }
}
