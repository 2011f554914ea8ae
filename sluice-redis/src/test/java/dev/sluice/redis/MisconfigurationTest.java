package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.KeyOverride;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.StoreException;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rule the Redis store cannot decide is refused when it is given to the store, and an error of
 * the request or the script (not an outage) fails the request instead of being admitted by
 * {@code failure_mode: open}.
 */
class MisconfigurationTest {
  /** Its own server: one test fills its memory. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  final RecordingListener listener = new RecordingListener();
  RedisStore store;
  RateLimiter limiter;

  @BeforeEach
  void connect() {
    store = RedisStore.connect(redis.get().uri());
  }

  @AfterEach
  void close() {
    if (limiter != null) {
      limiter.close();
    } else {
      store.close();
    }
  }

  private static String unique(String stem) {
    return stem + "." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  }

  private static Rule log(String name, long limit) {
    return Rule.builder(name).window(limit, Duration.ofMinutes(1)).failureMode(FailureMode.OPEN).build();
  }

  @Test
  void aSlidingLogWindowAboveTheStoresLargestLimitIsRefusedAtBuildNamingRuleWindowAndMaximum() {
    Rule big = log("big.log", ScriptAlgorithm.LOG_MAX_LIMIT + 1);
    assertThatThrownBy(() -> limiter = Sluice.builder().rules(big).store(store).build())
        .isInstanceOf(UnsupportedRuleException.class)
        .hasMessageContaining("rule 'big.log'")
        .hasMessageContaining("window 10000001 per 1m")
        .hasMessageContaining("sliding_log supports limits up to 10000000")
        .hasMessageContaining("sliding_window");
  }

  @Test
  void aSlidingLogWindowAtTheStoresLargestLimitIsAccepted() {
    limiter = Sluice.builder().rules(log("max.log", ScriptAlgorithm.LOG_MAX_LIMIT)).store(store).build();
    assertThat(limiter.acquire("max.log", "k").allowed()).isTrue();
  }

  @Test
  void anOverridesWindowAboveTheStoresLargestLimitIsRefusedAtBuildNamingTheOverride() {
    Rule tiered = Rule.builder("tiered.log").window(10, Duration.ofMinutes(1))
        .override(new KeyOverride(List.of("premium:*"), List.of(new Window(20_000_000, Duration.ofHours(1)))))
        .build();
    assertThatThrownBy(() -> limiter = Sluice.builder().rules(tiered).store(store).build())
        .isInstanceOf(UnsupportedRuleException.class)
        .hasMessageContaining("rule 'tiered.log'")
        .hasMessageContaining("override 'premium:*'")
        .hasMessageContaining("window 20000000 per 1h")
        .hasMessageContaining("up to 10000000");
  }

  @Test
  void newRulesTheStoreCannotDecideAreRefusedAndTheRulesInForceStay() {
    Rule ok = log("ok.log", 3);
    limiter = Sluice.builder().rules(ok).store(store).build();
    RuleSet before = limiter.rules();
    RuleSet next = RuleSet.of(log("ok.log", 5), log("big.log", ScriptAlgorithm.LOG_MAX_LIMIT + 1));
    assertThatThrownBy(() -> limiter.updateRules(next))
        .isInstanceOf(UnsupportedRuleException.class)
        .hasMessageContaining("rule 'big.log'")
        .hasMessageContaining("window 10000001 per 1m")
        .hasMessageContaining("up to 10000000");
    assertThat(limiter.rules()).isSameAs(before);
    assertThat(limiter.acquire("ok.log", "k").items().get(0).windows().get(0).limit()).isEqualTo(3);
  }

  @Test
  void aServerOutOfMemoryIsAnOutageThatFailureModesDecide() {
    String name = unique("oom");
    Rule open = log(name, 10);
    Rule closed = Rule.builder(unique("oom.closed")).window(10, Duration.ofMinutes(1))
        .failureMode(FailureMode.CLOSED).build();
    limiter = Sluice.builder().rules(open, closed).store(store).listener(listener).build();
    limiter.acquire(name, "warm-up"); // the library loaded, so the next calls only write
    redis.get().command("CONFIG", "SET", "maxmemory", "1");
    try {
      Decision o = limiter.acquire(name, "k");
      assertThat(o.allowed()).isTrue();
      assertThat(o.degraded()).isTrue();
      Decision c = limiter.acquire(closed.name(), "k");
      assertThat(c.allowed()).isFalse();
      assertThat(c.degraded()).isTrue();
      assertThat(c.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);
      assertThat(listener.storeErrors).hasSize(2).allSatisfy(e -> assertThat(e).hasMessageStartingWith("OOM"));
    } finally {
      redis.get().command("CONFIG", "SET", "maxmemory", "0");
    }
    assertThat(limiter.acquire(name, "k").degraded()).isFalse();
  }

  @Test
  void aScriptErrorUnderFailureModeOpenIsNotAdmitted() {
    String name = unique("wrongtype");
    Rule open = log(name, 10);
    limiter = Sluice.builder().rules(open).store(store).listener(listener).build();
    // A key under Sluice's prefix that holds a hash: the script's GET fails with WRONGTYPE, an
    // error of this key, not an outage.
    redis.get().command("HSET", store.keyName(name, "k"), "f", "v");

    assertThatThrownBy(() -> limiter.acquire(name, "k"))
        .isInstanceOf(StoreException.class)
        .hasMessageStartingWith("the Redis store refused the decision: WRONGTYPE");
    assertThatThrownBy(() -> limiter.tryAcquire(name, "k"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("WRONGTYPE");
    assertThatThrownBy(() -> limiter.acquireAsync(Request.of(name, "k")).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(StoreException.class)
        .hasMessageContaining("WRONGTYPE");
    assertThat(listener.decisions).as("no decision was made, degraded or not").hasValue(0);
    assertThat(listener.storeErrors).hasSize(3).allMatch(e -> e instanceof StoreException);

    // Other keys of the rule are decided as ever.
    assertThat(limiter.acquire(name, "other").degraded()).isFalse();
  }
}
