package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.algorithm.AlgorithmTable;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The store's counts of keys and bytes: what they include, and that they never drift from what is held. */
class MemoryStoreAccountingTest {
  final FakeTicker ticker = new FakeTicker();
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();
  final Rule a = Rule.builder("a").window(20, Duration.ofSeconds(10)).build();
  final Rule b = Rule.builder("b").algorithm(Algorithm.SLIDING_WINDOW).window(5, Duration.ofSeconds(2))
      .window(50, Duration.ofSeconds(60)).build();
  final RateLimiter limiter = Sluice.builder().store(store).rules(a, b).build();

  private static long bytesOf(Rule r, String key) {
    return MemoryStore.keyBytes(key) + AlgorithmTable.of(r.algorithm()).newStateBytes(r, r.windowsFor(key));
  }

  @Test
  void bytesAreCountedWhenKeysAreCreatedAndFreedOnReset() {
    limiter.acquire("a", "k1");
    limiter.acquire("a", "k2");
    limiter.acquire("b", "k1");
    assertThat(store.keys("a")).isEqualTo(2);
    assertThat(store.bytes("a")).isEqualTo(bytesOf(a, "k1") + bytesOf(a, "k2"));
    assertThat(store.bytes()).isEqualTo(store.bytes("a") + bytesOf(b, "k1"));
    assertThat(store.recount()).containsExactly(3, store.bytes());

    limiter.reset("a", "k1").toCompletableFuture().join();
    assertThat(store.bytes("a")).isEqualTo(bytesOf(a, "k2"));
    assertThat(store.size()).isEqualTo(2);
    assertThat(store.recount()).containsExactly(2, store.bytes());
  }

  @Test
  void aGrowingLogIsCountedAndFreedWhenItsKeyIsSwept() {
    Rule big = Rule.builder("big").window(1000, Duration.ofSeconds(10)).build();
    limiter.updateRules(RuleSet.of(a, b, big));
    for (int i = 0; i < 100; i++) {
      limiter.acquire("big", "k");
    }
    // 100 units: the ring of 8 grew to 128 longs.
    assertThat(store.bytes("big")).isEqualTo(bytesOf(big, "k") + 8 * (128 - 8));
    assertThat(store.recount()).containsExactly(1, store.bytes());

    ticker.advanceMillis(9_999);
    store.cleanUp();
    assertThat(store.size()).isEqualTo(1);
    ticker.advanceMillis(1);
    store.cleanUp();
    assertThat(store.size()).isZero();
    assertThat(store.bytes()).isZero();
    assertThat(store.bytes("big")).isZero();
  }

  @Test
  void aRuleChangeFreesEverythingItsOldDefinitionHeld() {
    limiter.acquire("a", "k1");
    limiter.acquire("b", "k1");
    limiter.acquire("b", "k2");
    Rule b2 = b.toBuilder().window(6, Duration.ofSeconds(2)).build();
    limiter.updateRules(RuleSet.of(a, Rule.builder("b").window(6, Duration.ofSeconds(2)).build()));
    assertThat(store.keys("b")).isZero();
    assertThat(store.bytes()).isEqualTo(bytesOf(a, "k1"));
    limiter.updateRules(RuleSet.of(b2));
    assertThat(store.size()).isZero();
    assertThat(store.bytes()).isZero();
  }

  /**
   * Random creation, admission (logs grow), sweeps, resets and rule changes from several threads;
   * the store is small, so it is often full. Afterwards the counts equal what is held; meanwhile
   * they never exceed the caps.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5})
  void countsNeverDriftFromWhatIsHeld(long seed) throws InterruptedException {
    FakeTicker clock = new FakeTicker();
    long maxBytes = 40_000;
    MemoryStore s = MemoryStore.builder().ticker(clock).maxKeys(60).maxBytes(maxBytes).build();
    List<Rule> rules = List.of(
        Rule.builder("log").window(300, Duration.ofMillis(50)).build(),
        Rule.builder("tb").algorithm(Algorithm.TOKEN_BUCKET).window(10, Duration.ofMillis(30)).build(),
        Rule.builder("sw").algorithm(Algorithm.SLIDING_WINDOW).window(10, Duration.ofMillis(40)).build(),
        Rule.builder("fw").algorithm(Algorithm.FIXED_WINDOW).window(4, Duration.ofMillis(20)).build());
    RateLimiter l = Sluice.builder().store(s).rules(RuleSet.of(rules)).build();
    AtomicBoolean done = new AtomicBoolean();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      long threadSeed = seed * 31 + t;
      threads.add(new Thread(() -> {
        Random r = new Random(threadSeed);
        for (int i = 0; i < 20_000; i++) {
          String rule = rules.get(r.nextInt(rules.size())).name();
          String key = "k" + r.nextInt(r.nextBoolean() ? 5 : 200);
          int op = r.nextInt(100);
          try {
            if (op < 70) {
              l.acquire(Request.of(rule, key, r.nextInt(4)));
            } else if (op < 85) {
              String other = rules.get(r.nextInt(rules.size())).name();
              l.acquire(Request.of(Item.of(rule, key, 1), Item.of(other, "m" + r.nextInt(50), 2)));
            } else if (op < 92) {
              l.reset(rule, key);
            } else if (op < 97) {
              clock.advanceMicros(r.nextInt(3000));
            } else {
              s.cleanUp();
            }
          } catch (IllegalArgumentException e) {
            // a rule removed by the rule changer meanwhile
          }
        }
      }));
    }
    Thread changer = new Thread(() -> {
      Random r = new Random(seed);
      while (!done.get()) {
        List<Rule> next = new ArrayList<>();
        for (Rule rule : rules) {
          int pick = r.nextInt(3);
          if (pick == 0) {
            next.add(rule);
          } else if (pick == 1) {
            next.add(rule.toBuilder().window(rule.windows().get(0).limit() + 1, Duration.ofMillis(25)).build());
          }
        }
        l.updateRules(RuleSet.of(next));
        l.updateRules(RuleSet.of(rules));
        Thread.onSpinWait();
      }
    });
    Thread watcher = new Thread(() -> {
      while (!done.get()) {
        long k = s.size();
        long bytes = s.bytes();
        if (k < 0 || k > 60 || bytes < 0 || bytes > maxBytes) {
          violations.add(k + " keys, " + bytes + " bytes");
        }
      }
    });
    threads.forEach(Thread::start);
    changer.start();
    watcher.start();
    for (Thread t : threads) {
      t.join();
    }
    done.set(true);
    changer.join();
    watcher.join();

    assertThat(violations).isEmpty();
    long[] held = s.recount();
    assertThat(s.size()).as("keys counted vs held").isEqualTo(held[0]);
    assertThat(s.bytes()).as("bytes counted vs held").isEqualTo(held[1]);
    long perRule = 0;
    for (Rule rule : rules) {
      perRule += s.bytes(rule.name());
    }
    assertThat(perRule).isEqualTo(held[1]);
    clock.advanceMillis(1000);
    s.cleanUp();
    assertThat(s.size()).isZero();
    assertThat(s.bytes()).isZero();
  }
}
