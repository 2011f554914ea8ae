package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bytes per key as Redis counts them ({@code MEMORY USAGE}: key name, value and the key's entry in
 * the keyspace), for the numbers in docs/redis.md.
 */
class MemoryFootprintTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static long usage(RedisStore store, Rule rule, String key) {
    return (Long) redis.get().command("MEMORY", "USAGE", store.keyName(rule.name(), key), "SAMPLES", "0");
  }

  private static long strlen(RedisStore store, Rule rule, String key) {
    return (Long) redis.get().command("STRLEN", store.keyName(rule.name(), key));
  }

  private static void admit(RedisStore store, Rule rule, String key, long cost, int times) {
    for (int i = 0; i < times; i++) {
      store.decideSync(new Batch(List.of(new ResolvedItem(rule, key, cost, rule.windows())), Request.STORE_CLOCK));
    }
  }

  private static Rule twoWindows(String name, Algorithm a) {
    return Rule.builder(name).algorithm(a).window(20, Duration.ofMinutes(1)).window(5, Duration.ofSeconds(3)).build();
  }

  @Test
  void countersOfTwoWindowsTakeAHundredBytesOrLessWithShortKeyNames() {
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      for (Algorithm a : List.of(Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW, Algorithm.LEAKY_BUCKET)) {
        // The name of docs/redis.md's example: sluice:{auth.createToken|user:42}, 33 bytes.
        Rule example = twoWindows("auth.createToken", a);
        admit(store, example, "user:42", 1, 3);
        long full = usage(store, example, "user:42");
        assertThat(strlen(store, example, "user:42")).as(a.configName()).isEqualTo(28);
        // A short name shows what the state itself costs: sluice:{t|u1}, 13 bytes.
        Rule shortName = twoWindows(a == Algorithm.FIXED_WINDOW ? "f" : a == Algorithm.TOKEN_BUCKET ? "t" : "l", a);
        admit(store, shortName, "u1", 1, 3);
        long small = usage(store, shortName, "u1");
        System.out.printf("MEMORY USAGE %s, 2 windows: %d bytes (33-byte key name), %d bytes (13-byte key name)%n",
            a.configName(), full, small);
        assertThat(small).as(a.configName()).isLessThanOrEqualTo(100);
        assertThat(full).as(a.configName()).isLessThanOrEqualTo(128);
      }
      Rule sw = twoWindows("auth.sw", Algorithm.SLIDING_WINDOW);
      admit(store, sw, "user:42", 1, 3);
      System.out.printf("MEMORY USAGE sliding_window, 2 windows, precision 10: %d bytes%n", usage(store, sw, "user:42"));
    }
  }

  /**
   * Windows of an hour keep 6-byte slots; windows up to half an hour (up to 2^31 µs), 4-byte
   * ones.
   */
  @Test
  void slidingLogTakesAtMostEightBytesPerAdmittedUnit() {
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      for (long limit : new long[] {100, 1000, 10_000, -100, -1000, -10_000}) {
        boolean narrow = limit < 0;
        limit = Math.abs(limit);
        Rule log = Rule.builder((narrow ? "nlog" : "log") + limit)
            .window(limit, narrow ? Duration.ofMinutes(30) : Duration.ofHours(1)).build();
        admit(store, log, "k", 1, (int) Math.min(limit, 1000));
        if (limit > 1000) {
          admit(store, log, "k", (limit - 1000) / 100, 100);
        }
        long bytes = usage(store, log, "k");
        // The same key name with an empty log (a peek on an explicit time creates it; on the
        // server's clock it would write nothing): what does not grow with use.
        store.decideSync(new Batch(List.of(new ResolvedItem(log, "e", 0, log.windows())),
            System.currentTimeMillis() * 1000));
        long fixed = usage(store, log, "e");
        double perUnit = (double) (bytes - fixed) / limit;
        System.out.printf("MEMORY USAGE sliding_log (%s), %d units admitted: %d bytes (%d without units), %.2f per unit%n",
            narrow ? "30 min, 4-byte slots" : "1 h, 6-byte slots", limit, bytes, fixed, perUnit);
        assertThat(perUnit).as("bytes per unit at %d", limit).isLessThanOrEqualTo(narrow ? 5.5 : 8.0);
      }
    }
  }

  @Test
  void slidingLogOfAMillionUnitsWorksAndStaysUnderEightBytesPerUnit() {
    Rule log = Rule.builder("million").window(1_000_000, Duration.ofHours(1)).window(1000, Duration.ofSeconds(1)).build();
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      long t = 1_800_000_000_000_000L;
      // 1000 admissions of 1000 units, one second apart on an explicit clock.
      for (int i = 0; i < 1000; i++) {
        var d = store.decideSync(new Batch(List.of(new ResolvedItem(log, "k", 1000, log.windows())), t + i * 1_000_000L));
        assertThat(d.get(0).allowed()).isTrue();
        assertThat(d.get(0).windows().get(0).remaining()).isEqualTo(1_000_000 - 1000L * (i + 1));
      }
      var denied = store.decideSync(new Batch(List.of(new ResolvedItem(log, "k", 1, log.windows())), t + 1000 * 1_000_000L));
      assertThat(denied.get(0).allowed()).isFalse();
      // The oldest unit (t) leaves the hour at t + 1 h.
      assertThat(denied.get(0).windows().get(0).retryAfterMs()).isEqualTo(3_600_000 - 1_000_000);
      long bytes = usage(store, log, "k");
      System.out.printf("MEMORY USAGE sliding_log, 1000000 units admitted: %d bytes, %.2f per unit%n", bytes,
          bytes / 1e6);
      assertThat(bytes / 1e6).isLessThanOrEqualTo(8.0);
    }
  }
}
