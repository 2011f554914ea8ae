package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.WindowState;
import dev.sluice.algorithm.KeyState;
import dev.sluice.conformance.Threads;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link MemoryStore}'s explaining path ({@code acquire}) reads a denial of a key whose latest
 * decision was a denial without the lock, as {@code tryAcquire} does, and reports it from one
 * consistent state: the report the locked path gives at the same time.
 */
class OptimisticReportTest {
  private static final long T0 = 1_700_000_000_000_000L;

  private static RateLimiter limiter(MemoryStore store, Rule rule) {
    return Sluice.builder().store(store).rules(rule).build();
  }

  private static MemoryStore store(FakeTicker ticker) {
    return MemoryStore.builder().ticker(ticker).automaticSweeps(false).build();
  }

  /** The motivating rule: 20 per minute and 5 per 3 s. */
  private static Rule rule(Algorithm algorithm) {
    return Rule.builder("r").algorithm(algorithm).window(20, Duration.ofMinutes(1))
        .window(5, Duration.ofSeconds(3)).build();
  }

  /**
   * Once a denial was decided under the lock, further denials explained on the store's clock take
   * no lock and write nothing, and each reports what a twin store deciding every request under the
   * lock (at explicit times, which never skip it) reports at the same time.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void anExplainedDenialTakesNoLockAndReportsAsTheLockedPath(Algorithm algorithm) {
    Rule rule = rule(algorithm);
    FakeTicker ticker = new FakeTicker(T0);
    MemoryStore store = store(ticker);
    RateLimiter fast = limiter(store, rule);
    RateLimiter twin = limiter(store(new FakeTicker(T0)), rule);
    for (int i = 0; i < 6; i++) {
      ticker.setMicros(T0 + i * 1_000L);
      assertThat(fast.acquire("r", "k")).isEqualTo(twin.acquire(Request.of("r", "k").atMicros(T0 + i * 1_000L)));
    }
    KeyState s = store.held("r", "k");
    assertThat(s.denying).as("the sixth request was denied under the lock").isTrue();
    long version = s.version();
    long lastSeen = s.lastSeen;
    for (long at : new long[] {7_000, 100_000, 550_000}) { // the token bucket has room again at 600 ms
      ticker.setMicros(T0 + at);
      for (long cost : new long[] {1, 3, 21}) {
        Decision d = fast.acquire("r", "k", cost);
        assertThat(d.allowed()).as("at %d cost %d: %s", at, cost, d).isFalse();
        assertThat(d).isEqualTo(twin.acquire(Request.of("r", "k", cost).atMicros(T0 + at)));
      }
    }
    assertThat(s.version()).as("the lock was never taken").isEqualTo(version);
    assertThat(s.lastSeen).as("the denials' times are not recorded").isEqualTo(lastSeen);
    // The short window has room again: the lock decides, admits, and the key is no longer denying.
    ticker.setMicros(T0 + 3_000_000);
    assertThat(fast.acquire("r", "k")).isEqualTo(twin.acquire(Request.of("r", "k").atMicros(T0 + 3_000_000)))
        .extracting(Decision::allowed).isEqualTo(true);
    assertThat(store.held("r", "k").denying).isFalse();
  }

  /**
   * A denial explained again is answered with the same decision object while every number in it
   * stays the same (decisions are immutable), and with a new one, equal to what the locked path
   * reports, as soon as one moves: 6 s in random steps of 1 µs to 0.4 ms (every whole millisecond
   * of a retry or reset crossed, windows freed and admitted again), several costs and keys
   * interleaved on one thread, each compared with a twin store deciding under the lock.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void aDenialExplainedAgainIsTheSameDecisionUntilANumberInItMoves(Algorithm algorithm) {
    // The motivating rule, and one whose longer window's units leave it during the run, between
    // the shorter window's milliseconds: its remaining moves alone.
    sameDecisionUntilANumberMoves(rule(algorithm));
    sameDecisionUntilANumberMoves(Rule.builder("r").algorithm(algorithm).window(3, Duration.ofSeconds(1))
        .window(10, Duration.ofSeconds(4)).build());
  }

  /**
   * The one number that can move between a denial's whole milliseconds: a window that does not
   * deny gets a unit back (its oldest unit leaves it, or its bucket refills a token) at a time of
   * its own. Here 1 / 1 s denies, and the 10 s window's first unit, taken 0.3 ms into the run,
   * leaves it 0.2 ms after a denial was explained and remembered, before any millisecond of that
   * denial moves: the next denial must show it. (A token bucket's windows that do not deny refill
   * along with the one that does, from its times, in this rule; the random walk above covers it.)
   */
  @Test
  void aRememberedDenialIsNotAnsweredOnceAWindowThatDoesNotDenyGetsAUnitBack() {
    Rule rule = Rule.builder("r").algorithm(Algorithm.SLIDING_LOG).window(1, Duration.ofSeconds(1))
        .window(10, Duration.ofSeconds(10)).build();
    FakeTicker ticker = new FakeTicker(T0);
    RateLimiter fast = limiter(store(ticker), rule);
    RateLimiter twin = limiter(store(new FakeTicker(T0)), rule);
    Decision last = null;
    for (long at : new long[] {300, 1_000_500, 9_500_000, 10_000_050, 10_000_100, 10_000_500}) {
      ticker.setMicros(T0 + at);
      Decision d = fast.acquire("r", "k");
      assertThat(d).as("at %d", at).isEqualTo(twin.acquire(Request.of("r", "k").atMicros(T0 + at)));
      assertThat(d.allowed()).as("at %d", at).isEqualTo(at < 10_000_000);
      if (at == 10_000_500) {
        assertThat(d.items().get(0).windows().get(1).remaining())
            .as("the 10 s window got a unit back").isGreaterThan(last.items().get(0).windows().get(1).remaining());
        assertThat(d.retryAfterMs()).as("the denying window's milliseconds did not move").isEqualTo(last.retryAfterMs());
      }
      last = d;
    }
  }

  private static void sameDecisionUntilANumberMoves(Rule rule) {
    FakeTicker ticker = new FakeTicker(T0);
    RateLimiter fast = limiter(store(ticker), rule);
    RateLimiter twin = limiter(store(new FakeTicker(T0)), rule);
    java.util.Random random = new java.util.Random(20261129);
    int same = 0;
    int renewed = 0;
    int admitted = 0;
    Decision previous = null;
    int run = 0; // how many equal denials in a row end with previous
    for (long at = 0; at < 6_000_000; at += 1 + random.nextInt(400)) {
      ticker.setMicros(T0 + at);
      for (String key : new String[] {"a", "a", "b", "a"}) {
        for (long cost : new long[] {1, 1, 1, 2}) {
          Decision d = fast.acquire("r", key, cost);
          assertThat(d).as("at %d, %s, cost %d", at, key, cost)
              .isEqualTo(twin.acquire(Request.of("r", key, cost).atMicros(T0 + at)));
          if (d.allowed()) {
            admitted++;
            run = 0;
          } else if (d.equals(previous)) {
            // The first of a run may come from the locked path; the second was read without the
            // lock, and remembered.
            if (run >= 2) {
              assertThat(d).as("at %d, an equal denial is answered again", at).isSameAs(previous);
              same++;
            }
            run++;
          } else {
            renewed++;
            run = 1;
          }
          previous = d;
        }
      }
    }
    assertThat(admitted).as("windows freed and admitted again").isGreaterThan(10);
    assertThat(same).as("%s", rule).isGreaterThan(10_000);
    assertThat(renewed).as("%s", rule).isGreaterThan(10_000);
  }

  /**
   * Many threads on one key, {@code acquire} mixed with {@code tryAcquire}, in rounds at one fake
   * instant each. An exact model (the same store on one thread) says before each round how many
   * units the key has left; the threads share out exactly that many, and each such request must be
   * admitted. Between them, requests one unit larger than what the round had are explained while
   * other threads commit (and the sliding log's ring grows): each must be denied with a report of
   * one state, never negative, never showing room for the cost it denies. Once the round's units
   * are gone, every denial of one unit must report exactly what the model's locked path reports.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void explainedDenialsRacingWithCommitsAreConsistentAndAdmissionsExact(Algorithm algorithm)
      throws InterruptedException {
    // 1,500 units in 10 s: the sliding log's ring grows from 8 to 2,048 slots over the rounds.
    Rule rule = Rule.builder("r").algorithm(algorithm).window(300, Duration.ofSeconds(1))
        .window(1500, Duration.ofSeconds(10)).build();
    int threads = 6;
    int rounds = 90;
    long spacing = 137_003; // µs: refills part of the short window each round
    FakeTicker ticker = new FakeTicker(T0);
    RateLimiter limiter = limiter(store(ticker), rule);
    FakeTicker modelTicker = new FakeTicker(T0);
    RateLimiter model = limiter(store(modelTicker), rule);
    AtomicLong left = new AtomicLong();
    AtomicLong capacity = new AtomicLong();
    Map<Long, Decision> spentReport = new ConcurrentHashMap<>();
    AtomicLong round = new AtomicLong(-1);
    LongAdder expected = new LongAdder();
    CyclicBarrier nextRound = new CyclicBarrier(threads, () -> {
      long t = T0 + round.incrementAndGet() * spacing;
      ticker.setMicros(t);
      modelTicker.setMicros(t);
      long fits = 0;
      while (model.tryAcquire("r", "hot", 1)) {
        fits++;
      }
      capacity.set(fits);
      left.set(fits);
      expected.add(fits);
      // What the locked path reports for one more unit once the round's units are gone.
      spentReport.put(round.get(), model.acquire(Request.of("r", "hot", 1).atMicros(t)));
    });
    CyclicBarrier spent = new CyclicBarrier(threads);
    Queue<String> failures = new ConcurrentLinkedQueue<>();
    LongAdder admittedUnits = new LongAdder();
    LongAdder explainedDenials = new LongAdder();
    Threads.runAll(threads, Duration.ofSeconds(120), thread -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int r = 0; r < rounds; r++) {
        nextRound.await();
        while (left.get() > 0) {
          long tooMuch = capacity.get() + 1;
          for (int j = 0; j < 3; j++) {
            Decision d = limiter.acquire("r", "hot", tooMuch);
            explainedDenials.increment();
            String wrong = inconsistentDenial(d, tooMuch);
            if (wrong != null) {
              failures.add("round " + r + ": cost " + tooMuch + ": " + wrong + " in " + d);
            }
          }
          if (limiter.tryAcquire("r", "hot", tooMuch)) {
            failures.add("round " + r + ": admitted cost " + tooMuch);
          }
          long cost = claim(left, 1 + random.nextInt(3));
          if (cost > 0) {
            boolean admitted = random.nextBoolean() ? limiter.acquire("r", "hot", cost).allowed()
                : limiter.tryAcquire("r", "hot", cost);
            if (admitted) {
              admittedUnits.add(cost);
            } else {
              failures.add("round " + r + ": denied cost " + cost + " that fits");
            }
          }
        }
        spent.await(); // every unit of the round is taken
        Decision locked = spentReport.get((long) r);
        for (int j = 0; j < 3; j++) {
          Decision d = limiter.acquire("r", "hot", 1);
          if (!d.equals(locked)) {
            failures.add("round " + r + ": " + d + " where the locked path reports " + locked);
          }
          if (limiter.tryAcquire("r", "hot", 1)) {
            failures.add("round " + r + ": admitted a unit past its limit");
          }
        }
      }
    });
    assertThat(failures).as("%s", algorithm).isEmpty();
    assertThat(admittedUnits.sum()).isEqualTo(expected.sum()).isGreaterThan(1500L);
    assertThat(explainedDenials.sum()).isGreaterThan(1000L);
  }

  /**
   * What is wrong with {@code d} as the denial of {@code cost}, or null: it must be denied for the
   * use asked, every window's remaining within [0, limit], and some window exceeded that shows no
   * room for the cost (fewer units remaining, a positive retry) or that can never hold it.
   */
  private static String inconsistentDenial(Decision d, long cost) {
    if (d.allowed()) {
      return "admitted";
    }
    ItemDecision item = d.items().get(0);
    if (item.reason() != DenyReason.LIMIT_EXCEEDED && item.reason() != DenyReason.COST_EXCEEDS_LIMIT) {
      return "reason " + item.reason();
    }
    boolean explained = false;
    for (WindowState w : item.windows()) {
      if (w.remaining() < 0 || w.remaining() > w.limit()) {
        return "remaining " + w.remaining();
      }
      if (w.exceeded()) {
        if (w.retryAfterMs() == WindowState.NEVER) {
          explained |= cost > w.limit();
        } else {
          explained |= w.remaining() < cost && w.retryAfterMs() > 0;
        }
      } else if (item.reason() == DenyReason.LIMIT_EXCEEDED && w.remaining() < cost) {
        return "a window without room not marked exceeded";
      }
    }
    return explained ? null : "no window without room";
  }

  /** Takes up to {@code want} units from {@code left}; how many were taken. */
  private static long claim(AtomicLong left, long want) {
    while (true) {
      long l = left.get();
      if (l <= 0) {
        return 0;
      }
      long take = Math.min(l, want);
      if (left.compareAndSet(l, l - take)) {
        return take;
      }
    }
  }
}
