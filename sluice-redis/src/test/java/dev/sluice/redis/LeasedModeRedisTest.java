package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Leased mode on a real Redis, limiters as users build them, each with a store of its own on one
 * server: units come from the store's exact state, so the store never admits past its limit, and
 * a limiter closing gives back what it held.
 */
class LeasedModeRedisTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  /** 100 an hour, 10 % slack: a budget of 10 units. The window outlasts the test. */
  final Rule leased = Rule.builder("api").window(100, Duration.ofHours(1))
      .lease(new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0.1)).build();
  final String prefix = "sluice:lm" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
  final List<RateLimiter> limiters = new ArrayList<>();

  RateLimiter limiter() {
    RateLimiter l = Sluice.builder().rules(leased).store(RedisStore.builder(redis.get().uri()).prefix(prefix).build())
        .build();
    limiters.add(l);
    return l;
  }

  @AfterEach
  void close() {
    limiters.forEach(RateLimiter::close);
  }

  static long storeRemaining(RateLimiter via, String key) {
    return via.acquire("api", key, 0).items().get(0).windows().get(0).remaining();
  }

  @Test
  void theStoreNeverAdmitsPastItsLimitWhoeverHoldsTheUnits() {
    List<RateLimiter> three = List.of(limiter(), limiter(), limiter());
    int admitted = 0;
    for (int i = 0; i < 150; i++) {
      if (three.get(i % 3).acquire("api", "all").allowed()) {
        admitted++;
      }
    }
    assertThat(admitted).isLessThanOrEqualTo(100);
    // Units still held unused when the store ran out are at most the budget.
    assertThat(admitted).isGreaterThanOrEqualTo(100 - 10);
    assertThat(storeRemaining(three.get(0), "all")).isZero();
  }

  @Test
  void closingGivesTheUnitsHeldBack() throws InterruptedException {
    RateLimiter a = limiter();
    RateLimiter other = limiter();
    for (int i = 0; i < 3; i++) {
      assertThat(a.acquire("api", "all").allowed()).isTrue();
    }
    // The takes are answered asynchronously: wait for a's units to leave the store's window.
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (storeRemaining(other, "all") == 97 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(storeRemaining(other, "all")).isLessThan(97);
    a.close();
    assertThat(storeRemaining(other, "all")).isEqualTo(97);
  }
}
