package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.conformance.Rounds;
import dev.sluice.conformance.Rounds.Call;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Eviction racing with decisions. Windows are shorter than the gap between rounds, so at the
 * start of every round the hot key is idle and a sweeper evicts it while sixteen threads decide
 * on it. A decision applied to an evicted state would be lost, and the round would admit more
 * than the model.
 */
class MemoryStoreSweepConcurrencyTest {

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void sweepingWhileDecidingNeverLosesAnUpdate(Algorithm algorithm) throws InterruptedException {
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker()).build();
    Rule rule = Rule.builder("swept").algorithm(algorithm).window(60, Duration.ofMillis(300)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(rule).build();
    long base = 1_800_000_000_000_000L;
    IntToLongFunction time = r -> base + r * 373_000L;
    AtomicLong now = new AtomicLong(base);
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger sweeps = new AtomicInteger();
    Thread sweeper = new Thread(() -> {
      while (!done.get()) {
        store.cleanUp(now.get());
        sweeps.incrementAndGet();
      }
    });
    sweeper.start();
    try {
      // One key only, so the sweeper is at it all the time; many short rounds, since the race
      // is at the start of each, before the first admission makes the key busy again.
      List<Call> calls = Rounds.run(limiter, "swept", 16, 300, 2, j -> "hot", time, now::set);
      Rounds.assertEachRoundAdmitsExactlyWhatFits(rule, calls, time);
    } finally {
      done.set(true);
      sweeper.join();
    }
    assertThat(sweeps.get()).as("sweeps made while deciding").isPositive();
  }
}
