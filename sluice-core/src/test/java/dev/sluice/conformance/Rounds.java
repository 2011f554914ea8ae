package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.conformance.Oracles.Expected;
import dev.sluice.conformance.Oracles.Oracle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;
import java.util.function.LongConsumer;
import java.util.stream.Collectors;

/**
 * Contention with a known answer. Threads send cost-1 requests in rounds; every request of a
 * round carries the round's explicit time, and a barrier keeps rounds apart. Cost-1 requests at
 * one instant are decided alike in any order — the first k that fit are admitted and the rest
 * denied, and a leaky bucket hands out the same set of slots — so the number a store admits per
 * key per round, and the waits it gives, must equal an exact model's however the threads
 * interleave. Any lost update or over-admission shows as a difference.
 */
public final class Rounds {
  private Rounds() {}

  /** One request: its round, key, and the store's answer. */
  public record Call(int round, String key, boolean allowed, long waitMs) {}

  /**
   * Runs {@code rounds} rounds on {@code threads} threads; in each round every thread sends
   * {@code perThread} requests, the j-th for key {@code keys.apply(j)}, at {@code timeOfRound}
   * microseconds.
   */
  public static List<Call> run(RateLimiter limiter, String rule, int threads, int rounds, int perThread,
      IntFunction<String> keys, IntToLongFunction timeOfRound) throws InterruptedException {
    return run(limiter, rule, threads, rounds, perThread, keys, timeOfRound, t -> {});
  }

  /** {@link #run} telling {@code roundStarts} each round's time just before its requests are sent. */
  public static List<Call> run(RateLimiter limiter, String rule, int threads, int rounds, int perThread,
      IntFunction<String> keys, IntToLongFunction timeOfRound, LongConsumer roundStarts) throws InterruptedException {
    AtomicInteger next = new AtomicInteger();
    CyclicBarrier barrier = new CyclicBarrier(threads,
        () -> roundStarts.accept(timeOfRound.applyAsLong(next.getAndIncrement())));
    ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    Threads.runAll(threads, Duration.ofSeconds(60), thread -> {
      List<Call> mine = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        // Every thread has finished round r − 1 before any starts round r.
        barrier.await();
        long t = timeOfRound.applyAsLong(r);
        for (int j = 0; j < perThread; j++) {
          String key = keys.apply(j);
          Decision d = limiter.acquire(Request.of(rule, key).atMicros(t));
          mine.add(new Call(r, key, d.allowed(), d.waitMs()));
        }
      }
      calls.addAll(mine);
    });
    return new ArrayList<>(calls);
  }

  /** Checks every key's admissions and waits per round against the model of {@code rule}. */
  public static void assertEachRoundAdmitsExactlyWhatFits(Rule rule, List<Call> calls, IntToLongFunction timeOfRound) {
    Map<String, Map<Integer, List<Call>>> byKey = calls.stream().collect(Collectors.groupingBy(Call::key,
        Collectors.groupingBy(Call::round, TreeMap::new, Collectors.toList())));
    byKey.forEach((key, rounds) -> {
      Oracle oracle = Oracles.of(rule, key);
      rounds.forEach((round, inRound) -> {
        long t = timeOfRound.applyAsLong(round);
        List<Long> expectedWaits = new ArrayList<>();
        for (int i = 0; i < inRound.size(); i++) {
          Expected e = oracle.decide(t, 1);
          if (e.allowed()) {
            expectedWaits.add(e.waitMs());
          }
        }
        List<Long> waits = inRound.stream().filter(Call::allowed).map(Call::waitMs).sorted()
            .collect(Collectors.toCollection(ArrayList::new));
        Collections.sort(expectedWaits);
        assertThat(waits).as("waits of the admitted among %d requests for key '%s' in round %d", inRound.size(), key,
            round).isEqualTo(expectedWaits);
      });
    });
  }
}
