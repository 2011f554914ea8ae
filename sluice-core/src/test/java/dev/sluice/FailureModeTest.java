package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import dev.sluice.testing.FlakyStore.Mode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/** SPEC §8: when the store fails, each rule follows its failure mode, and says so. */
class FailureModeTest {
  final FakeTicker ticker = new FakeTicker();
  final FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
  final Rule open = Rule.builder("open").window(4, Duration.ofSeconds(60)).failureMode(FailureMode.OPEN).build();
  final Rule closed = Rule.builder("closed").window(4, Duration.ofSeconds(60)).failureMode(FailureMode.CLOSED).build();
  final Rule local = Rule.builder("local").window(4, Duration.ofSeconds(60)).failureMode(FailureMode.LOCAL).build();
  final Rule closedShadow = Rule.builder("closed.shadow").window(4, Duration.ofSeconds(60))
      .failureMode(FailureMode.CLOSED).shadow(true).build();
  // Real time: the hanging store is cut off by the engine's timeout, which is what is tested.
  final RateLimiter limiter = Sluice.builder().rules(open, closed, local, closedShadow).store(store).ticker(ticker)
      .localShare(0.5).storeTimeout(Duration.ofMillis(50)).build();

  Decision decide(boolean async, Request r) {
    return async ? limiter.acquireAsync(r).toCompletableFuture().join() : limiter.acquire(r);
  }

  @ParameterizedTest
  @EnumSource(value = Mode.class, names = {"FAILS", "THROWS", "HANGS"})
  void openRulesAllowAndSayTheDecisionIsDegraded(Mode mode) {
    store.mode(mode);
    for (boolean async : new boolean[] {false, true}) {
      Decision d = decide(async, Request.of("open", "k"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.degraded()).isTrue();
      assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.NONE);
    }
  }

  @ParameterizedTest
  @EnumSource(value = Mode.class, names = {"FAILS", "THROWS", "HANGS"})
  void closedRulesDenyWithStoreUnavailable(Mode mode) {
    store.mode(mode);
    for (boolean async : new boolean[] {false, true}) {
      Decision d = decide(async, Request.of("closed", "k"));
      assertThat(d.allowed()).isFalse();
      assertThat(d.degraded()).isTrue();
      assertThat(d.retryAfterMs()).isZero();
      assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);
      assertThat(d.items().get(0).windows()).containsExactly(new WindowState(4, 60_000, 0, 0, 0, true));
    }
  }

  @ParameterizedTest
  @EnumSource(value = Mode.class, names = {"FAILS", "THROWS", "HANGS"})
  void localRulesHoldTheirShareOfTheLimitInProcess(Mode mode) {
    store.mode(mode);
    assertThat(decide(false, Request.of("local", "k")).allowed()).isTrue();
    Decision second = decide(true, Request.of("local", "k"));
    assertThat(second.allowed()).isTrue();
    assertThat(second.degraded()).isTrue();
    assertThat(second.items().get(0).windows().get(0).limit()).as("half of 4").isEqualTo(2);
    Decision third = decide(false, Request.of("local", "k"));
    assertThat(third.allowed()).isFalse();
    assertThat(third.degraded()).isTrue();
    assertThat(third.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(third.retryAfterMs()).isEqualTo(60_000);
  }

  @Test
  void degradedDecisionsEndByThemselvesWhenTheStoreIsBack() {
    store.mode(Mode.FAILS);
    decide(false, Request.of("local", "k"));
    decide(false, Request.of("open", "k"));
    store.mode(Mode.UP);
    Decision d = decide(false, Request.of("local", "k"));
    assertThat(d.degraded()).isFalse();
    assertThat(d.items().get(0).windows().get(0).remaining()).as("the store saw none of the outage's requests")
        .isEqualTo(3);
    assertThat(decide(true, Request.of("closed", "k")).allowed()).isTrue();
    assertThat(limiter.ping().toCompletableFuture().join()).isTrue();
  }

  @Test
  void pingSaysWhenTheStoreIsDown() {
    store.mode(Mode.FAILS);
    assertThat(limiter.ping().toCompletableFuture().join()).isFalse();
  }

  /** Regression: the local fallback consumed its items although a closed item denied the request. */
  @Test
  void closedItemDenialConsumesNothingInTheLocalFallback() {
    store.mode(Mode.FAILS);
    Decision d = decide(false, Request.of(Item.of("local", "k"), Item.of("closed", "k")));
    assertThat(d.allowed()).isFalse();
    assertThat(d.items()).extracting(ItemDecision::reason).containsExactly(DenyReason.NONE,
        DenyReason.STORE_UNAVAILABLE);
    assertThat(decide(false, Request.of("local", "k")).allowed()).isTrue();
    assertThat(decide(false, Request.of("local", "k")).allowed()).isTrue();
    assertThat(decide(false, Request.of("local", "k")).allowed()).isFalse();
  }

  @Test
  void shadowRulesNeverDenyEvenWhenClosed() {
    store.mode(Mode.FAILS);
    Decision d = decide(false, Request.of(Item.of("open", "k"), Item.of("closed.shadow", "k")));
    assertThat(d.allowed()).isTrue();
    assertThat(d.shadowDenied()).isTrue();
    assertThat(d.degraded()).isTrue();
  }

  @Test
  void hangingStoreIsCutOffAtTheTimeout() {
    store.mode(Mode.HANGS);
    for (boolean async : new boolean[] {false, true}) {
      long start = System.nanoTime();
      Decision d = decide(async, Request.of("open", "k"));
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertThat(d.degraded()).isTrue();
      assertThat(tookMs).isBetween(50L, 5_000L);
    }
  }

  @Test
  void blockingAcquireDoesNotWaitOnAStoreOutage() throws InterruptedException {
    store.mode(Mode.FAILS);
    RateLimiter blocking = Sluice.builder().rules(closed).store(store).ticker(ticker).sleeper(millis -> {
      throw new AssertionError("slept " + millis + " ms");
    }).build();
    Decision d = blocking.acquireBlocking(Request.of("closed", "k"), Duration.ofSeconds(10));
    assertThat(d.allowed()).isFalse();
    assertThat(d.degraded()).isTrue();
  }

  @Test
  void degradedLocalDecisionsUseTheRequestsExplicitTime() {
    store.mode(Mode.FAILS);
    long t = 1_800_000_000_000_000L;
    List<Boolean> allowed = new java.util.ArrayList<>();
    for (long dt : new long[] {0, 0, 0, 60_000_000}) {
      allowed.add(decide(false, Request.of("local", "k").atMicros(t + dt)).allowed());
    }
    assertThat(allowed).containsExactly(true, true, false, true);
  }
}
