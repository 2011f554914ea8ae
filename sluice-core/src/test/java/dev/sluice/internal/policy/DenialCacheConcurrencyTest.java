package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The cache's count of its entries stays true while threads keep, look up (ending expired
 * entries) and forget denials at once, and its bound holds but for the threads racing past it.
 */
class DenialCacheConcurrencyTest {
  private static final Rule RULE = Rule.builder("r").window(1, Duration.ofSeconds(1)).build();
  private static final List<Window> WINDOWS = RULE.windows();

  private static ItemDecision denial(String key, long retryMs) {
    return new ItemDecision("r", key, 1, false, DenyReason.LIMIT_EXCEEDED, 0,
        List.of(new WindowState(1, 1000, 0, retryMs, retryMs, true)), false);
  }

  @Test
  void theCountMatchesTheEntriesAfterThreadsRaceAndTheBoundHolds() throws Exception {
    int threads = 8;
    int cap = 30;
    DenialCache cache = new DenialCache(cap);
    AtomicLong clock = new AtomicLong(1_000_000);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long seed = t;
        done.add(pool.submit(() -> {
          SplittableRandom random = new SplittableRandom(seed);
          go.await();
          for (int i = 0; i < 20_000; i++) {
            String key = "k" + random.nextInt(60);
            long now = clock.addAndGet(random.nextInt(50));
            switch (random.nextInt(4)) {
              case 0, 1 -> cache.learn(RULE, key, 1, WINDOWS, denial(key, 2 + random.nextInt(20)), now);
              case 2 -> cache.check(RULE, key, 1 + random.nextInt(2), WINDOWS, now);
              default -> cache.forget("r", key);
            }
            assertThat(cache.size()).isBetween(0, cap + threads);
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    // Quiet now: every key looked up once after all have expired leaves nothing, and the count says so.
    long later = clock.get() + 1_000_000;
    for (int k = 0; k < 60; k++) {
      assertThat(cache.check(RULE, "k" + k, 1, WINDOWS, later)).isNull();
    }
    assertThat(cache.size()).isZero();
    assertThat(cache.isEmpty()).isTrue();
  }
}
