package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.algorithm.Heap;
import dev.sluice.testing.FakeTicker;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The bytes the store counts per key against the heap the keys actually take: the used heap after
 * a full collection, before and after 100,000 keys, with nothing else allocated meanwhile. The
 * figures per algorithm are in docs/configuration.md ("Memory store").
 */
class MemoryStoreBytesTest {
  private static final int KEYS = 100_000;

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void countedBytesPerKeyMatchTheHeapTheKeysTake(Algorithm algorithm) {
    measure(algorithm, "user:%010d");
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void countedBytesOfLong512ByteKeysMatchTheHeapTheyTake(Algorithm algorithm) {
    measure(algorithm, "%0512d");
  }

  private static void measure(Algorithm algorithm, String format) {
    FakeTicker ticker = new FakeTicker();
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxBytes(1L << 40).build();
    Rule rule = Rule.builder("measured").algorithm(algorithm).window(20, Duration.ofMinutes(1))
        .window(5, Duration.ofSeconds(3)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(rule).build();
    String[] keys = new String[KEYS];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = String.format(format, i);
    }
    limiter.acquire("measured", "warm-up");
    long before = usedAfterGc();
    for (String k : keys) {
      assertThat(limiter.acquire("measured", k).allowed()).isTrue();
    }
    long after = usedAfterGc();
    // The keys' strings existed before: what the store adds is everything else.
    long stringBytes = 0;
    for (String k : keys) {
      stringBytes += Heap.string(k);
    }
    double measured = (double) (after - before + stringBytes) / KEYS;
    double counted = (double) (store.bytes() - store.bytes() / (KEYS + 1)) / KEYS;
    System.out.printf("%s, key of %d chars: %.1f bytes counted per key, %.1f measured%n", algorithm,
        keys[0].length(), counted, measured);
    assertThat(counted).as("counted vs measured bytes per key").isBetween(measured * 0.95, measured * 1.10);
    assertThat(store.size()).isEqualTo(KEYS + 1);
  }

  private static long usedAfterGc() {
    MemoryMXBean m = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      used = Math.min(used, m.getHeapMemoryUsage().getUsed());
    }
    return used;
  }
}
