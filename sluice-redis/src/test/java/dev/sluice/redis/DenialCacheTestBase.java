package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The denial cache on Redis: two limiters, each with a store (and connection) of its own, on one
 * Redis, on the default settings (the cache on). Decision calls are counted with
 * {@code INFO commandstats}. Each test works under a key prefix of its own.
 */
abstract class DenialCacheTestBase extends TwoInstancesTestBase {
  private final Rule login = Rule.builder("login").window(2, Duration.ofSeconds(2)).build();
  private final Rule hourly = Rule.builder("hourly").window(100, Duration.ofHours(1)).build();
  private final RuleSet rules = RuleSet.of(login, hourly);

  @Override
  RuleSet rules() {
    return rules;
  }

  @Test
  void aDeniedKeyCostsNoDecisionCallUntilItsRetryTimeAndIsAdmittedAfter() throws Exception {
    a.acquire(Request.of("login", "ip:1", 2));
    Decision denied = a.acquire(Request.of("login", "ip:1"));
    assertThat(denied.allowed()).isFalse();
    long before = decisionCalls();
    for (int i = 0; i < 100; i++) { // within the 2 s window even on a loaded machine
      Decision d = a.acquire(Request.of("login", "ip:1"));
      assertThat(d.allowed()).isFalse();
      assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
      assertThat(d.retryAfterMs()).isBetween(1L, denied.retryAfterMs());
    }
    assertThat(decisionCalls()).isEqualTo(before);

    // The other instance has seen no denial: it asks the store, which denies it too.
    assertThat(b.acquire(Request.of("login", "ip:1")).allowed()).isFalse();
    assertThat(decisionCalls()).isEqualTo(before + 1);

    Thread.sleep(denied.retryAfterMs() + 20);
    assertThat(a.acquire(Request.of("login", "ip:1")).allowed()).isTrue();
  }

  @Test
  void instancesWithCachesOnOneStoreAdmitExactlyTheLimit() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> admitted = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        RateLimiter l = t % 2 == 0 ? a : b;
        admitted.add(pool.submit(() -> {
          go.await();
          int n = 0;
          for (int i = 0; i < 300; i++) {
            n += l.acquire(Request.of("hourly", "all")).allowed() ? 1 : 0;
          }
          return n;
        }));
      }
      long before = decisionCalls();
      go.countDown();
      int total = 0;
      for (Future<Integer> f : admitted) {
        total += f.get(60, TimeUnit.SECONDS);
      }
      assertThat(total).isEqualTo(100);
      // 1,200 requests: the 100 admitted and the first denials of each instance went to Redis.
      assertThat(decisionCalls() - before).isLessThan(600);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aResetThroughAnInstanceEndsItsCachedDenialAndTheOthersAtItsRetryTime() throws Exception {
    a.acquire(Request.of("login", "ip:2", 2));
    assertThat(a.acquire(Request.of("login", "ip:2")).allowed()).isFalse();
    Decision deniedOnB = b.acquire(Request.of("login", "ip:2"));
    assertThat(deniedOnB.allowed()).isFalse();

    a.reset("login", "ip:2").toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(a.acquire(Request.of("login", "ip:2")).allowed()).isTrue();
    // B does not hear of a reset made elsewhere: it answers its cached denial until the retry time
    // the store gave it, a denial the store would no longer make (docs/redis.md, "Denial cache").
    assertThat(b.acquire(Request.of("login", "ip:2")).allowed()).isFalse();
    Thread.sleep(deniedOnB.retryAfterMs() + 20);
    assertThat(b.acquire(Request.of("login", "ip:2")).allowed()).isTrue();
  }
}
