package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DecisionListener;
import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Leased mode on a real Redis of one topology, limiters as users build them, each with a store of
 * its own: units come from the store's exact state, so the store never admits past its limit, a
 * limiter closing gives back what it held, and one leader sizes them all.
 */
abstract class LeasedModeRedisTestBase {
  /** The URI of the topology under test. */
  abstract String uri();

  /** 100 an hour, 10 % slack: a budget of 10 units. The window outlasts the test. */
  final Rule leased = Rule.builder("api").window(100, Duration.ofHours(1))
      .lease(new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0.1)).build();
  final String prefix = "sluice:lm" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
  final List<RateLimiter> limiters = new ArrayList<>();

  RateLimiter limiter() {
    RateLimiter l = Sluice.builder().rules(leased).store(RedisStore.builder(uri()).prefix(prefix).build())
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
    // The first requests go to the store until a's first report is answered; then a takes units,
    // answered asynchronously: ask until the store counts more than a admitted.
    int admitted = 0;
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (storeRemaining(other, "all") == 100 - admitted && admitted < 50 && System.nanoTime() < deadline) {
      assertThat(a.acquire("api", "all").allowed()).isTrue();
      admitted++;
      Thread.sleep(5);
    }
    assertThat(storeRemaining(other, "all")).isLessThan(100 - admitted);
    a.close();
    assertThat(storeRemaining(other, "all")).isEqualTo(100 - admitted);
  }

  /** A limiter whose listener keeps what leased mode tells it. */
  static final class Watched implements DecisionListener {
    final RateLimiter limiter;
    final AtomicLong held = new AtomicLong();
    volatile boolean leads;
    final AtomicInteger terms = new AtomicInteger();

    Watched(Rule rule, RedisStore store) {
      limiter = Sluice.builder().rules(rule).store(store).listener(this).build();
    }

    @Override
    public void onLeasesHeld(int keys, long units) {
      held.set(units);
    }

    @Override
    public void onLeadership(boolean leads) {
      this.leads = leads;
      if (leads) {
        terms.incrementAndGet();
      }
    }
  }

  @Test
  void oneLeaderSizesByDemandAndAnotherTakesOverWhenItLeaves() throws InterruptedException {
    // 100,000 an hour, 1 % slack: a budget of 1,000 units; short leases so that the test is short.
    Rule rule = Rule.builder("api").window(100_000, Duration.ofHours(1))
        .lease(new LeasePolicy(Duration.ofMillis(300), Duration.ofMillis(30), 0.01)).build();
    List<Watched> w = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      w.add(new Watched(rule, RedisStore.builder(uri()).prefix(prefix).build()));
    }
    try {
      // 80 % of the demand on the first: 8 requests to 1 each per round, at least 2 s and until
      // the sizes follow the demand (a loaded machine stretches the report rounds; 20 s at most).
      long start = System.nanoTime();
      long end = start + Duration.ofSeconds(20).toNanos();
      while (System.nanoTime() < end) {
        for (int r = 0; r < 8; r++) {
          w.get(0).limiter.acquire("api", "all");
        }
        w.get(1).limiter.acquire("api", "all");
        w.get(2).limiter.acquire("api", "all");
        Thread.sleep(1);
        if (System.nanoTime() - start > Duration.ofSeconds(2).toNanos() && sizedByDemand(w)) {
          break;
        }
      }
      assertThat(w.stream().filter(x -> x.leads).count()).isEqualTo(1);
      // Sized in proportion: an even share would be 1,000 ÷ 4 = 250 each.
      assertThat(w.get(0).held.get()).isGreaterThan(w.get(1).held.get() + w.get(2).held.get());
      assertThat(w.get(1).held.get()).isLessThan(250);
      Watched leader = w.stream().filter(x -> x.leads).findFirst().orElseThrow();
      leader.limiter.close(); // resigns
      w.remove(leader);
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (w.stream().noneMatch(x -> x.leads) && System.nanoTime() < deadline) {
        for (Watched x : w) {
          x.limiter.acquire("api", "all");
        }
        Thread.sleep(1);
      }
      assertThat(w.stream().filter(x -> x.leads).count()).isEqualTo(1);
    } finally {
      w.forEach(x -> x.limiter.close());
    }
  }

  /** One instance leads, and the one with 80 % of the demand holds more than the other two together. */
  private static boolean sizedByDemand(List<Watched> w) {
    return w.stream().filter(x -> x.leads).count() == 1
        && w.get(0).held.get() > w.get(1).held.get() + w.get(2).held.get()
        && w.get(1).held.get() < 250;
  }
}
