package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The denial cache changes no decision: one limiter with it and one without, each on a store of its
 * own (remote-looking memory stores) and on one fake clock, admit exactly the same requests of a
 * random trace, for every algorithm, with one or two windows, costs from 0 to 3 and requests of up
 * to three items. A cached denial reports a retry time no later than the store's. And across
 * several instances and threads on one store, admissions never exceed the limit.
 */
class DenialCacheProperties {
  private static final String[] KEYS = {"a", "b", "c"};

  record Step(List<Item> items, long advanceMicros) {}

  private static RuleSet rules(Algorithm algorithm, boolean twoWindows) {
    Rule.Builder r = Rule.builder("r").algorithm(algorithm).window(3, Duration.ofSeconds(1));
    Rule.Builder s = Rule.builder("s").algorithm(algorithm).window(4, Duration.ofMillis(700));
    if (twoWindows) {
      r.window(5, Duration.ofSeconds(4));
      s.window(9, Duration.ofSeconds(3));
    }
    return RuleSet.of(r.build(), s.build());
  }

  @Property(tries = 300)
  void aLimiterWithTheCacheAdmitsExactlyWhatOneWithoutItAdmits(@ForAll Algorithm algorithm,
      @ForAll boolean twoWindows, @ForAll("steps") List<Step> steps) {
    FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
    FlakyStore cachedStore = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
    FlakyStore plainStore = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
    int[] answered = new int[1];
    try (RateLimiter cached = Sluice.builder().rules(rules(algorithm, twoWindows)).store(cachedStore).ticker(ticker)
            .listener(new DecisionListener() {
              @Override
              public void onCachedDenial(String rule, String key) {
                answered[0]++;
              }
            }).build();
        RateLimiter plain = Sluice.builder().rules(rules(algorithm, twoWindows)).store(plainStore).ticker(ticker)
            .denialCache(0).build()) {
      for (Step s : steps) {
        ticker.advanceMicros(s.advanceMicros);
        Request request = Request.of(s.items);
        Decision withCache = cached.acquire(request);
        Decision without = plain.acquire(request);
        assertThat(withCache.allowed()).as("%s at %d µs", s.items, ticker.nowMicros()).isEqualTo(without.allowed());
        if (!without.allowed() && without.retryAfterMs() != WindowState.NEVER) {
          assertThat(withCache.retryAfterMs()).isPositive().isLessThanOrEqualTo(without.retryAfterMs());
        }
        if (without.allowed()) {
          assertThat(withCache.items()).isEqualTo(without.items());
        }
      }
      // Every request a cache answered is a store call saved.
      assertThat(cachedStore.decideCalls()).isLessThanOrEqualTo(plainStore.decideCalls() - (answered[0] > 0 ? 1 : 0));
    }
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Item> item = Combinators.combine(Arbitraries.of("r", "s"), Arbitraries.of(KEYS),
        Arbitraries.longs().between(0, 3).edgeCases(c -> c.includeOnly(0L, 1L))).as(Item::of);
    Arbitrary<Long> advance = Arbitraries.frequencyOf(
        Tuple.of(5, Arbitraries.longs().between(0, 2_000)),
        Tuple.of(4, Arbitraries.longs().between(0, 400_000)),
        Tuple.of(1, Arbitraries.longs().between(0, 5_000_000)));
    return Combinators.combine(item.list().ofMinSize(1).ofMaxSize(3), advance).as(Step::new).list()
        .ofMinSize(1).ofMaxSize(80);
  }

  /**
   * Three limiters with their own caches on one store, eight threads, a frozen clock: together they
   * admit exactly the limit, however many requests their caches answered.
   */
  @Example
  void instancesWithCachesOnOneStoreAdmitNoMoreThanTheLimit() throws Exception {
    FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
    FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
    RuleSet rules = RuleSet.of(Rule.builder("r").window(50, Duration.ofMinutes(1)).build());
    List<RateLimiter> limiters = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      limiters.add(Sluice.builder().rules(rules).store(store).ticker(ticker).build());
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> admitted = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        RateLimiter l = limiters.get(t % limiters.size());
        admitted.add(pool.submit(() -> {
          go.await();
          int n = 0;
          for (int i = 0; i < 500; i++) {
            n += l.acquire(Request.of("r", "k")).allowed() ? 1 : 0;
          }
          return n;
        }));
      }
      go.countDown();
      int total = 0;
      for (Future<Integer> f : admitted) {
        total += f.get(30, TimeUnit.SECONDS);
      }
      assertThat(total).isEqualTo(50);
      // Most of the 4,000 requests were answered by a cache, not by the store.
      assertThat(store.decideCalls()).isLessThan(4_000 / 2);
    } finally {
      pool.shutdownNow();
      limiters.forEach(RateLimiter::close);
    }
  }
}
