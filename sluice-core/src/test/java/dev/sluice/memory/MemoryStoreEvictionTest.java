package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MemoryStoreEvictionTest {
  // A whole number of seconds since the epoch, so fixed windows and buckets start here.
  final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();

  /**
   * A key is dropped exactly when all its windows are empty: one admission under 2/1 s + 3/5 s
   * leaves them empty after the longest period (sliding log, fixed window), after its 500 ms
   * bucket of the 5 s window leaves (sliding window), or after the slowest emission interval,
   * ⌈5 s / 3⌉ (token and leaky buckets).
   */
  @ParameterizedTest
  @CsvSource({
      "SLIDING_LOG, 5000000",
      "SLIDING_WINDOW, 5500000",
      "FIXED_WINDOW, 5000000",
      "TOKEN_BUCKET, 1666667",
      "LEAKY_BUCKET, 1666667"})
  void keyIsEvictedExactlyWhenAllItsWindowsAreEmpty(Algorithm algorithm, long idleAfterMicros) {
    Rule rule = Rule.builder("evict").algorithm(algorithm).window(2, Duration.ofSeconds(1))
        .window(3, Duration.ofSeconds(5)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(rule).build();
    assertThat(limiter.acquire("evict", "k").allowed()).isTrue();
    assertThat(store.size()).isEqualTo(1);

    ticker.advanceMicros(idleAfterMicros - 1);
    store.cleanUp();
    assertThat(store.size()).as("one microsecond before its windows are empty").isEqualTo(1);

    ticker.advanceMicros(1);
    store.cleanUp();
    assertThat(store.size()).isZero();

    Decision d = limiter.acquire("evict", "k");
    assertThat(d.allowed()).isTrue();
    assertThat(d.items().get(0).windows().get(1).remaining()).isEqualTo(2);
  }

  @ParameterizedTest
  @CsvSource({"SLIDING_LOG", "FIXED_WINDOW", "TOKEN_BUCKET"})
  void cleanUpAtAnExplicitTimeJudgesIdlenessThen(Algorithm algorithm) {
    Rule rule = Rule.builder("evict").algorithm(algorithm).window(1, Duration.ofSeconds(1)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(rule).build();
    long t = 1_800_000_000_000_000L;
    limiter.acquire(Request.of("evict", "k").atMicros(t));
    store.cleanUp(t + 999_999);
    assertThat(store.size()).isEqualTo(1);
    store.cleanUp(t + 1_000_000);
    assertThat(store.size()).isZero();
  }

  @ParameterizedTest
  @CsvSource({"SLIDING_LOG", "SLIDING_WINDOW", "FIXED_WINDOW", "TOKEN_BUCKET", "LEAKY_BUCKET"})
  void cleanUpNeverForgetsAKeyWhoseClockIsAheadOfTheSweep(Algorithm algorithm) {
    Rule rule = Rule.builder("evict").algorithm(algorithm).window(1, Duration.ofSeconds(1)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(rule).build();
    long t = ticker.nowMicros() + 3_600_000_000L;
    limiter.acquire(Request.of("evict", "k").atMicros(t));
    Decision before = limiter.acquire(Request.of("evict", "k", 0).atMicros(t));
    store.cleanUp();
    assertThat(store.size()).isEqualTo(1);
    assertThat(limiter.acquire(Request.of("evict", "k", 0).atMicros(t))).isEqualTo(before);
  }
}
