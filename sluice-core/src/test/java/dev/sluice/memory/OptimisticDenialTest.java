package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.algorithm.KeyState;
import dev.sluice.conformance.Bounds;
import dev.sluice.conformance.Bounds.Admission;
import dev.sluice.conformance.Threads;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link MemoryStore#tryAcquire} denies a key that its latest decision denied by reading its
 * state without the lock. Such a denial must write nothing, and readers racing with commits (and
 * with the sliding log's ring growing) must never let a request through that the lock would deny.
 */
class OptimisticDenialTest {
  private static final long T0 = 1_700_000_000_000_000L;

  private static RateLimiter limiter(MemoryStore store, Rule rule) {
    return Sluice.builder().store(store).rules(rule).build();
  }

  private static MemoryStore store(FakeTicker ticker) {
    return MemoryStore.builder().ticker(ticker).automaticSweeps(false).build();
  }

  /**
   * A denial without the lock leaves the state untouched — not even the key's latest time — so
   * every later decision, on the ticker or at explicit times between, equals that of a twin that
   * never saw the denial.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void aDenialWithoutTheLockChangesNothing(Algorithm algorithm) {
    Rule rule = Rule.builder("r").algorithm(algorithm).window(2, Duration.ofSeconds(1))
        .window(3, Duration.ofSeconds(10)).build();
    FakeTicker ticker = new FakeTicker(T0);
    MemoryStore fastStore = store(ticker);
    RateLimiter fast = limiter(fastStore, rule);
    RateLimiter twin = limiter(store(ticker), rule);

    for (RateLimiter l : List.of(fast, twin)) {
      ticker.setMicros(T0);
      assertThat(l.tryAcquire("r", "k")).isTrue();
      ticker.setMicros(T0 + 1_000);
      assertThat(l.tryAcquire("r", "k")).isTrue();
      ticker.setMicros(T0 + 2_000);
      assertThat(l.tryAcquire("r", "k")).as("denied under the lock: the key is now marked denying").isFalse();
    }

    KeyState s = fastStore.held("r", "k");
    long version = s.version();
    long lastSeen = s.lastSeen;
    assertThat(lastSeen).isEqualTo(T0 + 2_000);
    ticker.setMicros(T0 + 400_000);
    assertThat(fast.tryAcquire("r", "k")).isFalse();
    assertThat(fast.tryAcquire("r", "k", 2)).isFalse();
    assertThat(fast.tryAcquire("r", "k", 5)).as("a cost above the limit").isFalse();
    assertThat(s.version()).as("the lock was never taken").isEqualTo(version);
    assertThat(s.lastSeen).as("the denial's time is not recorded").isEqualTo(lastSeen);

    // Explicit times between the latest recorded time and the denial's, then the ticker again:
    // each decision is the same as on the twin.
    long[] explicit = {T0 + 200_000, T0 + 300_000, T0 + 999_000, T0 + 1_000_000, T0 + 1_000_500};
    for (long t : explicit) {
      assertThat(fast.acquire(Request.of("r", "k", 0).atMicros(t)))
          .isEqualTo(twin.acquire(Request.of("r", "k", 0).atMicros(t)));
    }
    assertThat(fast.acquire(Request.of("r", "k").atMicros(T0 + 350_000)))
        .isEqualTo(twin.acquire(Request.of("r", "k").atMicros(T0 + 350_000)));
    long[] advances = {0, 600_000, 1, 5_000, 300_000, 700_000, 9_000_000};
    for (long a : advances) {
      ticker.advanceMicros(a);
      for (long cost : new long[] {1, 2, 1}) {
        assertThat(fast.tryAcquire("r", "k", cost)).isEqualTo(twin.tryAcquire("r", "k", cost));
      }
      assertThat(fast.acquire("r", "k", 0)).isEqualTo(twin.acquire("r", "k", 0));
    }
  }

  /**
   * A state marked denying whose cost now fits goes through the lock and is admitted, and the
   * mark is cleared, so an admitting stream does not try the lock-free read first.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void aFittingCostOnADenyingKeyTakesTheLockAndClearsTheMark(Algorithm algorithm) {
    Rule rule = Rule.builder("r").algorithm(algorithm).window(1, Duration.ofSeconds(1)).build();
    FakeTicker ticker = new FakeTicker(T0);
    MemoryStore store = store(ticker);
    RateLimiter limiter = limiter(store, rule);
    assertThat(limiter.tryAcquire("r", "k")).isTrue();
    assertThat(limiter.tryAcquire("r", "k")).isFalse();
    KeyState s = store.held("r", "k");
    assertThat(s.denying).isTrue();
    ticker.advanceMillis(1_000);
    assertThat(limiter.tryAcquire("r", "k")).isTrue();
    assertThat(s.denying).isFalse();
    assertThat(s.lastSeen).isEqualTo(T0 + 1_000_000);
  }

  /**
   * Many threads on one key and on a few keys, in rounds at one fake instant each. Before a round,
   * an exact model (the same store on one thread, fed the same admissions) says how many units
   * each key has left; the threads share out exactly that many, in costs of 1 to 3, and every one
   * of those requests must be admitted. Between them they send requests one unit larger than
   * what is left of the whole round, which must all be denied — most of them without the lock,
   * while other threads commit and the sliding log's ring grows — and once the units are gone,
   * every further request is denied. The admissions then meet the bound of SPEC §3 in every
   * window.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void contendedKeysAdmitExactlyWhatFitsAndStayWithinTheBound(Algorithm algorithm) throws InterruptedException {
    // 1,500 units in 10 s: the sliding log's ring grows from 8 to 2,048 slots over the rounds.
    Rule rule = Rule.builder("r").algorithm(algorithm).window(300, Duration.ofSeconds(1))
        .window(1500, Duration.ofSeconds(10)).build();
    for (List<String> keys : List.of(List.of("hot"), List.of("a", "b", "c"))) {
      hammer(rule, keys);
    }
  }

  private static void hammer(Rule rule, List<String> keys) throws InterruptedException {
    int threads = 8;
    int rounds = 90; // 12.3 s: past the long window, so the full ring also overwrites
    long spacing = 137_003; // µs: refills part of the short window each round
    FakeTicker ticker = new FakeTicker(T0);
    RateLimiter limiter = limiter(store(ticker), rule);
    FakeTicker modelTicker = new FakeTicker(T0);
    RateLimiter model = limiter(store(modelTicker), rule);
    Map<String, AtomicLong> left = new ConcurrentHashMap<>();
    Map<String, Long> capacity = new ConcurrentHashMap<>();
    Map<String, List<Admission>> byKey = new TreeMap<>();
    AtomicLong round = new AtomicLong(-1);
    // Runs alone between rounds: moves both clocks and asks the model what each key has left.
    CyclicBarrier nextRound = new CyclicBarrier(threads, () -> {
      long t = T0 + round.incrementAndGet() * spacing;
      ticker.setMicros(t);
      modelTicker.setMicros(t);
      for (String key : keys) {
        long fits = 0;
        while (model.tryAcquire("r", key, 1)) {
          fits++;
        }
        capacity.put(key, fits);
        left.put(key, new AtomicLong(fits));
        if (fits > 0) {
          byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(Admission.at(t, fits));
        }
      }
    });
    CyclicBarrier spent = new CyclicBarrier(threads);
    Queue<String> failures = new ConcurrentLinkedQueue<>();
    LongAdder admittedUnits = new LongAdder();
    Threads.runAll(threads, Duration.ofSeconds(120), thread -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int r = 0; r < rounds; r++) {
        nextRound.await();
        while (true) {
          List<String> open = keys.stream().filter(k -> left.get(k).get() > 0).toList();
          if (open.isEmpty()) {
            break;
          }
          String key = open.get(random.nextInt(open.size()));
          long tooMuch = capacity.get(key) + 1; // more than is left at any point of the round
          for (int j = 0; j < 3; j++) {
            if (limiter.tryAcquire("r", key, tooMuch)) {
              failures.add("round " + r + ": " + key + " admitted cost " + tooMuch);
            }
          }
          long cost = claim(left.get(key), 1 + random.nextInt(3));
          if (cost > 0) {
            if (limiter.tryAcquire("r", key, cost)) {
              admittedUnits.add(cost);
            } else {
              failures.add("round " + r + ": " + key + " denied cost " + cost + " that fits");
            }
          }
        }
        spent.await(); // every unit of the round is taken
        for (String key : keys) {
          for (int j = 0; j < 3; j++) {
            if (limiter.tryAcquire("r", key, 1)) {
              failures.add("round " + r + ": " + key + " admitted a unit past its limit");
            }
          }
        }
      }
    });
    assertThat(failures).as("%s on %s", rule.algorithm(), keys).isEmpty();
    long expected = byKey.values().stream().flatMap(List::stream).mapToLong(Admission::cost).sum();
    assertThat(admittedUnits.sum()).isEqualTo(expected).isGreaterThan(1500L * keys.size());
    for (List<Admission> list : byKey.values()) {
      list.sort(Comparator.comparingLong(Admission::atMicros));
      for (Window w : rule.windows()) {
        if (rule.algorithm() == Algorithm.TOKEN_BUCKET) {
          Bounds.atMostLimitPlusRefillInEverySpan(list, w);
        } else {
          Bounds.atMostLimitInEveryPeriod(list, w);
        }
      }
    }
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
