package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rule changed and then changed back is a changed rule twice: like the memory store, the Redis
 * store starts it afresh, and does not bring back the counts it held before the first change
 * (RateLimiter#updateRules: "changed and removed rules lose theirs").
 */
class RuleRevertedAfterAChangeTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final long T0 = 1_800_000_000_000L;

  /** Remaining in the rule's window after: 1 taken, the rule changed, changed back. */
  private static long remainingAfterRevert(Store store, String name) {
    Rule a = Rule.builder(name).window(3, Duration.ofMinutes(1)).build();
    Rule b = Rule.builder(name).window(4, Duration.ofMinutes(1)).build();
    try (RateLimiter limiter = Sluice.builder().store(store).rules(a).build()) {
      limiter.acquire(Request.of(Item.of(name, "k")).atMillis(T0));
      limiter.updateRules(RuleSet.of(b));
      limiter.updateRules(RuleSet.of(a));
      return limiter.acquire(Request.of(Item.of(name, "k", 0)).atMillis(T0 + 1)).items().get(0).windows().get(0)
          .remaining();
    }
  }

  @Test
  void aRuleChangedAndChangedBackStartsAfreshAsOnTheMemoryStore() {
    String name = "revert." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    long memory = remainingAfterRevert(MemoryStore.builder().ticker(new FakeTicker()).build(), name);
    long onRedis = remainingAfterRevert(RedisStore.connect(redis.get().uri()), name);
    assertThat(memory).isEqualTo(3);
    assertThat(onRedis).isEqualTo(memory);
  }
}
