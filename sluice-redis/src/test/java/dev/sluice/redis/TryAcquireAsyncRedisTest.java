package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.KeyOverride;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.StoreException;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisDeployment;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RateLimiter#tryAcquireAsync} on a real server: the store reads only the reason of the
 * script's reply, and still answers exactly as {@code acquireAsync(...).allowed()} on the same
 * trace, on a standalone server (decisions that may go together in one call) and on a Cluster.
 */
class TryAcquireAsyncRedisTest {
  /** Its own server: a test stops it. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.cluster(Flavor.REDIS);

  private static final String[] KEYS = {"a", "b", "vip", "c"};

  private final String suffix = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  private final List<RateLimiter> limiters = new ArrayList<>();

  @AfterEach
  void close() {
    limiters.forEach(RateLimiter::close);
  }

  private RateLimiter limiter(String uri, String prefix, Rule... rules) {
    RedisStore store = RedisStore.builder(uri).prefix("tryasync." + prefix + "." + suffix + ":").build();
    RateLimiter limiter = Sluice.builder().store(store).rules(rules).storeTimeout(Duration.ofSeconds(5)).build();
    limiters.add(limiter);
    return limiter;
  }

  /**
   * Windows of an hour and ten minutes, so that nothing refills or slides between the two twins'
   * calls of a step (microseconds apart on the server's clock).
   */
  private static List<Rule> rules() {
    List<Rule> rules = new ArrayList<>();
    for (Algorithm a : List.of(Algorithm.SLIDING_LOG, Algorithm.SLIDING_WINDOW, Algorithm.FIXED_WINDOW,
        Algorithm.TOKEN_BUCKET)) {
      for (boolean shadow : new boolean[] {false, true}) {
        rules.add(Rule.builder(a.configName() + (shadow ? ".shadow" : "")).algorithm(a).shadow(shadow)
            .window(6, Duration.ofHours(1))
            .window(3, Duration.ofMinutes(10))
            .override(new KeyOverride(List.of("vip"), List.of(new Window(9, Duration.ofHours(1)))))
            .build());
      }
    }
    return rules;
  }

  @Test
  void answersAsAcquireAsyncOnTheSameTraceOnAStandaloneServer() {
    sameAnswersAsAcquireAsync(redis.get());
  }

  @Test
  void answersAsAcquireAsyncOnTheSameTraceOnACluster() {
    sameAnswersAsAcquireAsync(cluster.get());
  }

  /** Twin limiters on one server, apart by their key prefix: one asked yes or no, the other for decisions. */
  private void sameAnswersAsAcquireAsync(RedisDeployment server) {
    List<Rule> rules = rules();
    RateLimiter fast = limiter(server.uri(), "fast", rules.toArray(new Rule[0]));
    RateLimiter full = limiter(server.uri(), "full", rules.toArray(new Rule[0]));
    Random random = new Random(7);
    int admitted = 0;
    int steps = 0;
    for (Rule rule : rules) {
      for (int n = 0; n < 40; n++) {
        String key = KEYS[random.nextInt(KEYS.length)];
        long cost = random.nextInt(4);
        boolean answer = fast.tryAcquireAsync(rule.name(), key, cost).toCompletableFuture().join();
        Decision expected = full.acquireAsync(Request.of(rule.name(), key, cost)).toCompletableFuture().join();
        assertThat(answer).as("%s, key %s, cost %d, step %d", rule.name(), key, cost, n).isEqualTo(expected.allowed());
        admitted += answer ? 1 : 0;
        steps++;
      }
      for (String key : KEYS) {
        assertThat(remaining(fast.acquire(rule.name(), key, 0))).as("%s, key %s: the same consumption", rule.name(), key)
            .isEqualTo(remaining(full.acquire(rule.name(), key, 0)));
      }
    }
    assertThat(admitted).as("both answers seen").isBetween(steps / 10, steps * 9 / 10);
  }

  private static List<Long> remaining(Decision d) {
    return d.items().get(0).windows().stream().map(WindowState::remaining).toList();
  }

  @Test
  void sixtyFourInFlightOnOneKeyAdmitExactlyTheLimit() {
    Rule rule = Rule.builder("hot").window(10, Duration.ofHours(1)).build();
    RateLimiter limiter = limiter(redis.get().uri(), "hot", rule);
    List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      inFlight.add(limiter.tryAcquireAsync("hot", "k").toCompletableFuture());
    }
    assertThat(inFlight.stream().filter(CompletableFuture::join).count()).isEqualTo(10);
    assertThat(limiter.acquire("hot", "k", 0).items().get(0).windows().get(0).remaining()).isZero();
  }

  @Test
  void badInputFailsTheStageAsTryAcquireThrows() {
    Rule rule = Rule.builder("r").window(10, Duration.ofHours(1)).build();
    RateLimiter limiter = limiter(redis.get().uri(), "bad", rule);
    assertThatThrownBy(() -> limiter.tryAcquireAsync("nope", "a").toCompletableFuture().join())
        .isInstanceOf(CompletionException.class).cause().isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown rule 'nope'");
    assertThatThrownBy(() -> limiter.tryAcquireAsync("r", "").toCompletableFuture().join())
        .cause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key must not be empty");
    assertThatThrownBy(() -> limiter.tryAcquireAsync("r", "k".repeat(513)).toCompletableFuture().join())
        .cause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key is 513 bytes");
    assertThatThrownBy(() -> limiter.tryAcquireAsync("r", "a", -1).toCompletableFuture().join())
        .cause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost must be >= 0, was -1");
    assertThat(limiter.acquire("r", "a", 0).items().get(0).windows().get(0).remaining()).isEqualTo(10);
  }

  @Test
  void aKeyOfAnotherTypeFailsTheStageWithAStoreExceptionInsteadOfBeingAdmitted() {
    Rule open = Rule.builder("open").window(10, Duration.ofHours(1)).failureMode(FailureMode.OPEN).build();
    RateLimiter limiter = limiter(redis.get().uri(), "wrongtype", open);
    RedisStore store = RedisStore.builder(redis.get().uri()).prefix("tryasync.wrongtype." + suffix + ":").build();
    redis.get().command("HSET", store.keyName("open", "k"), "f", "v");
    store.close();
    assertThatThrownBy(() -> limiter.tryAcquireAsync("open", "k").toCompletableFuture().join())
        .isInstanceOf(CompletionException.class)
        .cause().isInstanceOf(StoreException.class).hasMessageContaining("WRONGTYPE");
  }

  @Test
  void rulesFollowTheirFailureModeWhileTheServerIsDown() {
    FakeTicker ticker = new FakeTicker();
    Rule open = Rule.builder("open").window(1, Duration.ofHours(1)).failureMode(FailureMode.OPEN).build();
    Rule closed = Rule.builder("closed").window(100, Duration.ofHours(1)).failureMode(FailureMode.CLOSED).build();
    Rule local = Rule.builder("local").window(10, Duration.ofHours(1)).failureMode(FailureMode.LOCAL).build();
    RedisStore store = RedisStore.builder(redis.get().uri()).prefix("tryasync.down." + suffix + ":").build();
    RateLimiter limiter = Sluice.builder().store(store).rules(open, closed, local).ticker(ticker).localShare(0.5)
        .storeTimeout(Duration.ofMillis(200)).build();
    limiters.add(limiter);
    assertThat(join(limiter.tryAcquireAsync("open", "k"))).isTrue();
    assertThat(join(limiter.tryAcquireAsync("open", "k"))).as("the store decides: the limit is 1").isFalse();
    assertThat(join(limiter.tryAcquireAsync("closed", "k"))).isTrue();

    redis.get().stop();
    try {
      assertThat(join(limiter.tryAcquireAsync("open", "k"))).as("open admits").isTrue();
      assertThat(join(limiter.tryAcquireAsync("closed", "k"))).as("closed denies").isFalse();
      List<Boolean> locals = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        locals.add(join(limiter.tryAcquireAsync("local", "k")));
      }
      assertThat(locals).as("half of 10, held in process").containsExactly(true, true, true, true, true, false);
    } finally {
      redis.get().restart();
    }
  }

  private static boolean join(CompletionStage<Boolean> stage) {
    return stage.toCompletableFuture().join();
  }
}
