package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.BanPolicy;
import dev.sluice.ItemDecision;
import dev.sluice.policy.LiveLimit;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A key of a rule of 5 a minute and 100 an hour at 4 used, given a live limit of 3 a minute (no
 * hour), peeked at, then given its rule's windows back: it has 1 left in the minute and 96 in the
 * hour, on every algorithm, through {@code Sluice.builder()} and {@code policies()} as a user
 * sets live limits, on the memory store and on a real Redis. A peek under the live limit changes
 * nothing: on Redis the key's value is the same bytes before and after it; on the memory store a
 * limiter whose key was peeked at decides everything after as one whose key was not.
 */
class LiveLimitLoweredAndRestoredTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final String KEY = "user:42";
  private static final LiveLimit THREE = LiveLimit.windows(List.of(Window.of(3, Duration.ofMinutes(1))));

  private static RuleSet rules(Algorithm algorithm) {
    return rules(algorithm, false);
  }

  /** With {@code bans}, the rule counts denials toward a ban (never reached here): decisions take the policies' path. */
  private static RuleSet rules(Algorithm algorithm, boolean bans) {
    Rule.Builder b = Rule.builder("per_user").algorithm(algorithm).window(5, Duration.ofMinutes(1))
        .window(100, Duration.ofHours(1));
    if (bans) {
      b.ban(new BanPolicy(1000, Duration.ofMinutes(1), Duration.ofMinutes(1)));
    }
    return RuleSet.of(b.build());
  }

  private static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  private static ItemDecision decide(RateLimiter l, String key, long cost) {
    return l.acquire("per_user", key, cost).items().get(0);
  }

  private static List<Long> remaining(ItemDecision d) {
    return d.windows().stream().map(WindowState::remaining).toList();
  }

  private static void consumeFour(RateLimiter l, String key) {
    for (int i = 0; i < 4; i++) {
      assertThat(decide(l, key, 1).allowed()).isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void onTheMemoryStoreAPeekUnderALoweredLimitChangesNothingAndTheRestoredKeyHasOneLeft(Algorithm algorithm) {
    FakeTicker ticker = new FakeTicker();
    try (RateLimiter peeked = Sluice.builder().rules(rules(algorithm)).store(MemoryStore.builder().ticker(ticker).build())
        .ticker(ticker).sleeper(ticker).build();
        RateLimiter untouched = Sluice.builder().rules(rules(algorithm))
            .store(MemoryStore.builder().ticker(ticker).build()).ticker(ticker).sleeper(ticker).build()) {
      consumeFour(peeked, KEY);
      consumeFour(untouched, KEY);
      // A partly refilled unit of a schedule is rounded up when carried: a second makes one.
      ticker.advance(Duration.ofSeconds(1));
      join(peeked.policies().setLimit("per_user", KEY, THREE));
      join(untouched.policies().setLimit("per_user", KEY, THREE));

      ItemDecision peek = decide(peeked, KEY, 0);
      assertThat(peek.windows()).extracting(WindowState::limit).containsExactly(3L);
      assertThat(remaining(peek)).containsExactly(0L);
      assertThat(decide(peeked, KEY, 0)).isEqualTo(peek);

      join(peeked.policies().removeLimit("per_user", KEY));
      join(untouched.policies().removeLimit("per_user", KEY));
      ItemDecision back = decide(peeked, KEY, 0);
      assertThat(back).isEqualTo(decide(untouched, KEY, 0));
      if (algorithm != Algorithm.LEAKY_BUCKET) {
        assertThat(remaining(back)).containsExactly(1L, 96L);
      }
      assertThat(decide(peeked, KEY, 1)).isEqualTo(decide(untouched, KEY, 1));
      assertThat(decide(peeked, KEY, 1)).isEqualTo(decide(untouched, KEY, 1));
      assertThat(decide(peeked, KEY, 0)).isEqualTo(decide(untouched, KEY, 0));
    }
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void onRedisAPeekUnderALoweredLimitLeavesTheValueByteForByteAndTheRestoredKeyHasOneLeft(Algorithm algorithm) {
    onRedis(algorithm, false);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void onRedisTheSameHoldsForARuleThatBans(Algorithm algorithm) {
    onRedis(algorithm, true);
  }

  private static void onRedis(Algorithm algorithm, boolean bans) {
    String prefix = "lr" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    byte[] name = new KeyNames(prefix).name("per_user", KEY);
    RedisClient client = RedisClient.create(redis.get().uri());
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix(prefix).build();
        RateLimiter limiter = Sluice.builder().rules(rules(algorithm, bans)).store(store).build();
        StatefulRedisConnection<byte[], byte[]> raw = client.connect(ByteArrayCodec.INSTANCE)) {
      consumeFour(limiter, KEY);
      consumeFour(limiter, "twin");
      join(limiter.policies().setLimit("per_user", KEY, THREE));
      byte[] value = raw.sync().get(name);
      byte[] dump = raw.sync().dump(name);
      long ttl = raw.sync().pttl(name);

      ItemDecision peek = decide(limiter, KEY, 0);
      assertThat(peek.windows()).extracting(WindowState::limit).containsExactly(3L);
      assertThat(remaining(peek)).containsExactly(0L);
      assertThat(decide(limiter, KEY, 1).allowed()).isFalse();
      assertThat(raw.sync().get(name)).isEqualTo(value);
      assertThat(raw.sync().dump(name)).isEqualTo(dump);
      assertThat(raw.sync().pttl(name)).isBetween(ttl - 5_000, ttl);

      join(limiter.policies().removeLimit("per_user", KEY));
      ItemDecision back = decide(limiter, KEY, 0);
      assertThat(back.windows()).extracting(WindowState::limit).containsExactly(5L, 100L);
      assertThat(remaining(back)).isEqualTo(remaining(decide(limiter, "twin", 0)));
      if (algorithm != Algorithm.LEAKY_BUCKET) {
        assertThat(remaining(back)).containsExactly(1L, 96L);
        assertThat(decide(limiter, KEY, 1).allowed()).isTrue();
        assertThat(decide(limiter, KEY, 1).allowed()).isFalse();
      }
    } finally {
      client.shutdown();
    }
  }
}
