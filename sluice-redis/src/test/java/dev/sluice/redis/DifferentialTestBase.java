package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The same random traces, on explicit time, through the memory store (the reference) and a
 * Redis store must give identical decisions: every item, every window, every number.
 */
abstract class DifferentialTestBase {

  abstract String uri();

  abstract void flush();

  private void compare(long seed, List<Algorithm> algorithms, int steps) {
    compare(seed, algorithms, steps, TraceGenerator.Profile.SMALL);
  }

  private void compare(long seed, List<Algorithm> algorithms, int steps, TraceGenerator.Profile profile) {
    flush();
    TraceGenerator trace = new TraceGenerator(seed, algorithms, 2, 6, 1_700_000_000_000_000L + seed * 7919, profile);
    // The ticker never moves: the memory store then never sweeps idle keys on its own clock,
    // which would make it forget times seen that the Redis store (with a long TTL slack) keeps.
    MemoryStore memory = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    try (RedisStore redis = RedisStore.builder(uri()).prefix("diff" + seed + ":").ttlSlack(Duration.ofMinutes(5)).build()) {
      for (int i = 0; i < steps; i++) {
        Batch b = trace.next();
        List<ItemDecision> expected = memory.decideSync(b);
        List<ItemDecision> actual = redis.decideSync(b);
        assertThat(actual)
            .as("seed %d step %d at %d µs, items %s", seed, i, b.timeMicros(), b.items())
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void slidingLogDecidesExactlyAsTheMemoryStore() {
    for (long seed = 1; seed <= 3; seed++) {
      compare(seed, List.of(Algorithm.SLIDING_LOG), 700);
    }
  }

  @Test
  void slidingWindowDecidesExactlyAsTheMemoryStore() {
    for (long seed = 11; seed <= 13; seed++) {
      compare(seed, List.of(Algorithm.SLIDING_WINDOW), 700);
    }
  }

  @Test
  void fixedWindowDecidesExactlyAsTheMemoryStore() {
    for (long seed = 21; seed <= 23; seed++) {
      compare(seed, List.of(Algorithm.FIXED_WINDOW), 700);
    }
  }

  @Test
  void tokenBucketDecidesExactlyAsTheMemoryStore() {
    for (long seed = 31; seed <= 33; seed++) {
      compare(seed, List.of(Algorithm.TOKEN_BUCKET), 700);
    }
  }

  @Test
  void leakyBucketDecidesExactlyAsTheMemoryStore() {
    for (long seed = 41; seed <= 43; seed++) {
      compare(seed, List.of(Algorithm.LEAKY_BUCKET), 700);
    }
  }

  /** Logs beyond 4 KB are read and written slot by slot, and grow and wrap around. */
  @Test
  void largeSlidingLogsDecideExactlyAsTheMemoryStore() {
    compare(61, List.of(Algorithm.SLIDING_LOG), 1500, new TraceGenerator.Profile(3000, 400_000, 80, 400, 0, 0, 0));
  }

  /**
   * Jumps of nine years move the base of log slots: 6 bytes wide where a first window of about an
   * hour makes them so, 4 bytes without it. Every other algorithm must not care.
   */
  @Test
  void jumpsOfYearsDecideExactlyAsTheMemoryStore() {
    long nineYears = 9L * 366 * 24 * 3600 * 1_000_000;
    long hour = 3600L * 1_000_000;
    compare(71, List.of(Algorithm.values()), 800, new TraceGenerator.Profile(40, 30_000, 5, 3000, 300, nineYears, hour));
    compare(72, List.of(Algorithm.values()), 800, new TraceGenerator.Profile(40, 30_000, 5, 3000, 300, nineYears, 0));
  }

  /**
   * Windows of up to half an hour get 4-byte log slots, which reach 71 minutes from their base:
   * over hours of steady traffic (steps of up to 20 s) the base moves up again and again while
   * units are inside the windows, in the script's quick and general paths alike.
   */
  @Test
  void fourByteLogSlotsMoveTheirBaseWhileUnitsAreInside() {
    long halfHour = 30L * 60 * 1_000_000;
    compare(91, List.of(Algorithm.SLIDING_LOG), 1500, new TraceGenerator.Profile(40, 30_000, 5, 20_000_000, 0, 0, halfHour));
  }

  /**
   * Windows of about three years: the log's slots are 8 bytes wide (periods beyond 2^46 µs), in the
   * script and in the values the client reads its reports from. Jumps of two years let units leave.
   */
  @Test
  void windowsOfYearsDecideExactlyAsTheMemoryStore() {
    long year = 366L * 24 * 3600 * 1_000_000;
    compare(81, List.of(Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW), 800,
        new TraceGenerator.Profile(12, 30_000, 3, 3000, 60, 2 * year, 3 * year));
  }

  @Test
  void mixedRequestsOfEveryAlgorithmDecideExactlyAsTheMemoryStore() {
    for (long seed = 51; seed <= 53; seed++) {
      compare(seed, List.of(Algorithm.values()), 1000);
    }
  }
}
