package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.FailureMode;
import dev.sluice.FleetView;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.internal.Engine;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code failure_mode: local} holds 1 / the instances sharing the store: limiters on one
 * remote-looking store with policies (a memory store behind), counting each other through
 * heartbeats on the store's clock, a fake one.
 */
class FleetTest {
  private final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  private final MemoryStore behind = MemoryStore.builder().ticker(ticker).build();
  /** One per limiter, as each instance has its own connection to the store. */
  private final List<FlakyStore> connections = new ArrayList<>();
  private final Rule local = Rule.builder("r").window(30, Duration.ofHours(1)).failureMode(FailureMode.LOCAL).build();
  private final List<RateLimiter> limiters = new ArrayList<>();

  private Engine limiter() {
    FlakyStore store = new FlakyStore(behind).withPolicies().shared();
    connections.add(store);
    RateLimiter l = Sluice.builder().rules(local).store(store).ticker(ticker).denialCache(0).build();
    limiters.add(l);
    return (Engine) l;
  }

  @AfterEach
  void close() {
    limiters.forEach(RateLimiter::close);
    behind.close();
  }

  /** Advances the clock a heartbeat at a time until {@code done} holds; fails after 10 s of waiting. */
  private void beatUntil(BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited 10 s").isLessThan(deadline);
      ticker.advanceMillis(Fleet.BEAT_MICROS / 1000);
      Thread.sleep(2 * PolicyCache.POLL_MILLIS);
    }
  }

  @Test
  void eachOfThreeInstancesHoldsAThirdOfTheLimitWhileTheStoreIsOut() throws Exception {
    List<Engine> three = List.of(limiter(), limiter(), limiter());
    beatUntil(() -> three.stream().allMatch(e -> e.localShare() == 1.0 / 3));

    connections.forEach(c -> c.mode(FlakyStore.Mode.FAILS));
    int admitted = 0;
    for (Engine e : three) {
      for (int i = 0; i < 20; i++) {
        admitted += e.acquire(Request.of("r", "k")).allowed() ? 1 : 0;
      }
    }
    assertThat(admitted).isEqualTo(30); // 10 each
  }

  @Test
  void anInstanceThatClosesLeavesAtOnceAndOneThatDiesAfterItsHeartbeatsStop() throws Exception {
    Engine a = limiter();
    Engine b = limiter();
    Engine c = limiter();
    beatUntil(() -> a.localShare() == 1.0 / 3 && b.localShare() == 1.0 / 3);

    c.close();
    limiters.remove(c);
    beatUntil(() -> a.localShare() == 1.0 / 2 && b.localShare() == 1.0 / 2);

    // An instance that stops without leaving: counted until three heartbeats are missed.
    join(behind.policies().heartbeat("gone", Fleet.TTL_MILLIS));
    beatUntil(() -> a.localShare() == 1.0 / 3);
    beatUntil(() -> a.localShare() == 1.0 / 2);
  }

  @Test
  void whileNoHeartbeatGetsThroughTheShareStaysAsLastCounted() {
    FailingHeartbeats policies = new FailingHeartbeats();
    Fleet fleet = new Fleet(policies, ticker);
    fleet.tick();
    assertThat(fleet.live()).isEqualTo(4);
    policies.failing = true;
    ticker.advanceMillis(10_000);
    fleet.tick();
    assertThat(fleet.live()).isEqualTo(4);
    // Not due yet: no second heartbeat within a second.
    policies.failing = false;
    policies.count = 2;
    fleet.tick();
    assertThat(fleet.live()).isEqualTo(4);
    ticker.advanceMillis(1_000);
    fleet.tick();
    assertThat(fleet.live()).isEqualTo(2);
  }

  @Test
  void aStoreWithoutPoliciesOrALocalStoreCountsNoInstancesAndAGivenShareWins() throws Exception {
    try (RateLimiter noPolicies = Sluice.builder().rules(local).store(new FlakyStore(behind).shared()).build();
        RateLimiter inMemory = Sluice.builder().rules(local).ticker(ticker).build();
        RateLimiter given = Sluice.builder().rules(local).store(new FlakyStore(behind).withPolicies().shared())
            .ticker(ticker).localShare(0.25).build()) {
      Engine other = limiter();
      beatUntil(() -> other.localShare() == 1.0 / 2); // "given" counts as an instance all the same
      assertThat(((Engine) noPolicies).localShare()).isEqualTo(1.0);
      assertThat(((Engine) inMemory).localShare()).isEqualTo(1.0);
      assertThat(((Engine) given).localShare()).isEqualTo(0.25);
    }
  }

  @Test
  void theLimitersFleetListsTheInstancesHeardMostRecentFirstAndAnUnsharedStoreIsAlone() throws Exception {
    Engine a = limiter();
    Engine b = limiter();
    beatUntil(() -> a.localShare() == 1.0 / 2 && b.localShare() == 1.0 / 2);
    FleetView seen = join(a.fleet(10));
    assertThat(seen.live()).isEqualTo(2);
    assertThat(seen.instances()).extracting(FleetView.Instance::id)
        .containsExactlyInAnyOrder(seen.self(), join(b.fleet(10)).self());
    assertThat(seen.self()).isNotEqualTo(join(b.fleet(10)).self());
    assertThat(seen.instances()).allSatisfy(i -> assertThat(i.lastHeartbeatAgeMillis()).isBetween(0L,
        Fleet.TTL_MILLIS));
    // Bounded: the count says how many there are beyond those listed.
    FleetView one = join(a.fleet(1));
    assertThat(one.live()).isEqualTo(2);
    assertThat(one.instances()).hasSize(1);
    assertThat(a.fleet(0)).failsWithin(Duration.ofSeconds(1)).withThrowableOfType(Exception.class)
        .withMessageContaining("max must be from 1 to 1000, was 0");

    try (RateLimiter inMemory = Sluice.builder().rules(local).ticker(ticker).build()) {
      FleetView alone = join(inMemory.fleet(50));
      assertThat(alone.live()).isEqualTo(1);
      assertThat(alone.instances()).containsExactly(new FleetView.Instance(alone.self(), 0));
    }
  }

  private static <T> T join(java.util.concurrent.CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  /** Heartbeats answered with {@link #count}, or failed while {@link #failing}. */
  private static final class FailingHeartbeats extends PolicyCacheTest.FakePolicies {
    volatile boolean failing;
    volatile int count = 4;

    @Override
    public java.util.concurrent.CompletionStage<Integer> heartbeat(String instance, long ttlMillis) {
      return failing
          ? java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException("store is down"))
          : java.util.concurrent.CompletableFuture.completedFuture(count);
    }
  }
}
