package dev.sluice.conformance;

import static dev.sluice.DenyReason.COST_EXCEEDS_LIMIT;
import static dev.sluice.DenyReason.LIMIT_EXCEEDED;
import static dev.sluice.DenyReason.WAIT_EXCEEDS_MAX_WAIT;
import static dev.sluice.WindowState.NEVER;
import static dev.sluice.conformance.Script.allowed;
import static dev.sluice.conformance.Script.allowedAfterWait;
import static dev.sluice.conformance.Script.denied;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.WindowState;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scripted traces with every number a store must answer, one per algorithm. The numbers were
 * derived by hand from the semantics in the memory store's state classes (the reference); times
 * are milliseconds after {@link #BASE_MS}, which is aligned to a day.
 */
public abstract class AlgorithmTracesConformanceTest extends StoreConformance {

  private Script script(Rule rule) {
    assumeSupported(rule.algorithm());
    return new Script(limiter(rule), rule.name(), "k");
  }

  @Test
  void slidingLogCountsEveryUnitForExactlyOnePeriod() {
    Script s = script(rule("sl").algorithm(Algorithm.SLIDING_LOG).window(3, ms(1000)).window(5, ms(10_000)).build());
    s.expect(0, 1, allowed(), ws(3, 1000, 2, 0, 1000, false), ws(5, 10000, 4, 0, 10000, false));
    s.expect(100, 2, allowed(), ws(3, 1000, 0, 0, 1000, false), ws(5, 10000, 2, 0, 10000, false));
    // The unit taken at 0 leaves the 1 s window at 1000.
    s.expect(200, 1, denied(LIMIT_EXCEEDED, 800), ws(3, 1000, 0, 800, 900, true), ws(5, 10000, 2, 0, 9900, false));
    // (t−P, t] is open on the left: at 1000 the unit of 0 no longer counts.
    s.expect(1000, 1, allowed(), ws(3, 1000, 0, 0, 1000, false), ws(5, 10000, 1, 0, 10000, false));
    // Cost 2 needs the two units of 100 to leave the 1 s window and the unit of 0 the 10 s one.
    s.expect(1000, 2, denied(LIMIT_EXCEEDED, 9000), ws(3, 1000, 0, 100, 1000, true),
        ws(5, 10000, 1, 9000, 10000, true));
    s.expect(1100, 1, allowed(), ws(3, 1000, 1, 0, 1000, false), ws(5, 10000, 0, 0, 10000, false));
    s.expect(1100, 0, allowed(), ws(3, 1000, 1, 0, 1000, false), ws(5, 10000, 0, 0, 10000, false));
    s.expect(1100, 4, denied(COST_EXCEEDS_LIMIT, NEVER), ws(3, 1000, 1, NEVER, 1000, true),
        ws(5, 10000, 0, 0, 10000, false));
    s.expect(10_000, 1, allowed(), ws(3, 1000, 2, 0, 1000, false), ws(5, 10000, 0, 0, 10000, false));
    s.expect(10_050, 1, denied(LIMIT_EXCEEDED, 50), ws(3, 1000, 2, 0, 950, false), ws(5, 10000, 0, 50, 9950, true));
  }

  @Test
  void slidingWindowHoldsEachUnitUntilItsBucketLeavesTheWindow() {
    // 4 per second in 4 buckets of 250 ms; the 5 most recent buckets are counted.
    Script s = script(rule("sw").algorithm(Algorithm.SLIDING_WINDOW).precision(4).window(4, ms(1000)).build());
    s.expect(0, 1, allowed(), ws(4, 1000, 3, 0, 1250, false));
    s.expect(300, 2, allowed(), ws(4, 1000, 1, 0, 1200, false));
    // The unit of 0 (bucket [0, 250)) stops counting at 1250, 250 ms after the exact log would let it go.
    s.expect(600, 2, denied(LIMIT_EXCEEDED, 650), ws(4, 1000, 1, 650, 900, true));
    s.expect(1249, 2, denied(LIMIT_EXCEEDED, 1), ws(4, 1000, 1, 1, 251, true));
    s.expect(1250, 2, allowed(), ws(4, 1000, 0, 0, 1250, false));
    s.expect(1250, 1, denied(LIMIT_EXCEEDED, 250), ws(4, 1000, 0, 250, 1250, true));
    s.expect(1500, 0, allowed(), ws(4, 1000, 2, 0, 1000, false));
    s.expect(1500, 5, denied(COST_EXCEEDS_LIMIT, NEVER), ws(4, 1000, 2, NEVER, 1000, true));
  }

  @Test
  void fixedWindowCountsPerAlignedWindow() {
    Script s = script(rule("fw").algorithm(Algorithm.FIXED_WINDOW).window(3, ms(1000)).window(5, ms(10_000)).build());
    s.expect(0, 1, allowed(), ws(3, 1000, 2, 0, 1000, false), ws(5, 10000, 4, 0, 10000, false));
    s.expect(500, 2, allowed(), ws(3, 1000, 0, 0, 500, false), ws(5, 10000, 2, 0, 9500, false));
    s.expect(999, 1, denied(LIMIT_EXCEEDED, 1), ws(3, 1000, 0, 1, 1, true), ws(5, 10000, 2, 0, 9001, false));
    s.expect(1000, 1, allowed(), ws(3, 1000, 2, 0, 1000, false), ws(5, 10000, 1, 0, 9000, false));
    s.expect(1500, 2, denied(LIMIT_EXCEEDED, 8500), ws(3, 1000, 2, 0, 500, false), ws(5, 10000, 1, 8500, 8500, true));
    s.expect(1500, 1, allowed(), ws(3, 1000, 1, 0, 500, false), ws(5, 10000, 0, 0, 8500, false));
    // A window nobody used since it began is full and has nothing to reset.
    s.expect(9999, 1, denied(LIMIT_EXCEEDED, 1), ws(3, 1000, 3, 0, 0, false), ws(5, 10000, 0, 1, 1, true));
    s.expect(10_000, 1, allowed(), ws(3, 1000, 2, 0, 1000, false), ws(5, 10000, 4, 0, 10000, false));
    s.expect(10_000, 6, denied(COST_EXCEEDS_LIMIT, NEVER), ws(3, 1000, 2, NEVER, 1000, true),
        ws(5, 10000, 4, NEVER, 10000, true));
  }

  @Test
  void fixedWindowAdmitsTwiceTheLimitAcrossABoundary() {
    Script s = script(rule("fw2").algorithm(Algorithm.FIXED_WINDOW).window(3, ms(1000)).build());
    s.expect(999, 3, allowed(), ws(3, 1000, 0, 0, 1, false));
    s.expect(999, 1, denied(LIMIT_EXCEEDED, 1), ws(3, 1000, 0, 1, 1, true));
    s.expect(1000, 3, allowed(), ws(3, 1000, 0, 0, 1000, false));
  }


  @Test
  void aDayLongFixedWindowResetsAtMidnightUtc() {
    // BASE_MS is a midnight, UTC: the window of the previous day ends exactly there.
    long day = 86_400_000;
    Script s = script(rule("fwday").algorithm(Algorithm.FIXED_WINDOW).window(2, Duration.ofDays(1)).build());
    s.expect(-3_600_000, 2, allowed(), ws(2, day, 0, 0, 3_600_000, false));
    s.expect(-1, 1, denied(LIMIT_EXCEEDED, 1), ws(2, day, 0, 1, 1, true));
    s.expect(0, 1, allowed(), ws(2, day, 1, 0, day, false));
    s.expect(day - 1, 1, allowed(), ws(2, day, 0, 0, 1, false));
  }

  @Test
  void fixedWindowsAlignToMultiplesOfThePeriodSinceTheEpochNotToTheFirstRequest() {
    // 7 h does not divide a day: its windows start at multiples of 7 h since 1970-01-01T00:00Z,
    // and the one holding BASE_MS (a midnight) ends 5 h after it.
    long sevenHours = 25_200_000;
    long boundary = 18_000_000;
    assertThat(Math.floorMod(BASE_MS + boundary, sevenHours)).isZero();
    Script s = script(rule("fw7h").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofHours(7)).build());
    s.expect(0, 1, allowed(), ws(1, sevenHours, 0, 0, boundary, false));
    s.expect(boundary - 1, 1, denied(LIMIT_EXCEEDED, 1), ws(1, sevenHours, 0, 1, 1, true));
    s.expect(boundary, 1, allowed(), ws(1, sevenHours, 0, 0, sevenHours, false));
  }
  @Test
  void tokenBucketRefillsSmoothlyAtLimitPerPeriod() {
    // Emission intervals: 250 ms for 4/1 s, 1 s for 6/6 s.
    Script s = script(rule("tb").algorithm(Algorithm.TOKEN_BUCKET).window(4, ms(1000)).window(6, ms(6000)).build());
    s.expect(0, 1, allowed(), ws(4, 1000, 3, 0, 250, false), ws(6, 6000, 5, 0, 1000, false));
    s.expect(0, 3, allowed(), ws(4, 1000, 0, 0, 1000, false), ws(6, 6000, 2, 0, 4000, false));
    s.expect(100, 1, denied(LIMIT_EXCEEDED, 150), ws(4, 1000, 0, 150, 900, true), ws(6, 6000, 2, 0, 3900, false));
    s.expect(250, 1, allowed(), ws(4, 1000, 0, 0, 1000, false), ws(6, 6000, 1, 0, 4750, false));
    s.expect(1000, 2, allowed(), ws(4, 1000, 1, 0, 750, false), ws(6, 6000, 0, 0, 6000, false));
    s.expect(1000, 1, denied(LIMIT_EXCEEDED, 1000), ws(4, 1000, 1, 0, 750, false), ws(6, 6000, 0, 1000, 6000, true));
    // 2.6 units refilled in the 1 s bucket: remaining rounds down.
    s.expect(1100, 0, allowed(), ws(4, 1000, 1, 0, 650, false), ws(6, 6000, 0, 0, 5900, false));
    s.expect(1100, 5, denied(COST_EXCEEDS_LIMIT, NEVER), ws(4, 1000, 1, NEVER, 650, true),
        ws(6, 6000, 0, 0, 5900, false));
    s.expect(3000, 1, allowed(), ws(4, 1000, 3, 0, 250, false), ws(6, 6000, 1, 0, 5000, false));
  }

  @Test
  void tokenBucketRoundsTheEmissionIntervalUpSoItNeverRefillsFasterThanTheLimit() {
    // 3 per second: T = ⌈1,000,000 / 3⌉ = 333,334 µs, so a full refill takes 1,000,002 µs.
    Script s = script(rule("tb3").algorithm(Algorithm.TOKEN_BUCKET).window(3, ms(1000)).build());
    s.expect(0, 3, allowed(), ws(3, 1000, 0, 0, 1001, false));
    s.expect(1000, 0, allowed(), ws(3, 1000, 2, 0, 1, false));
    s.expect(1000, 3, denied(LIMIT_EXCEEDED, 1), ws(3, 1000, 2, 1, 1, true));
    s.expect(1001, 3, allowed(), ws(3, 1000, 0, 0, 1001, false));
  }

  @Test
  void leakyBucketSchedulesEachRequestOneIntervalAfterThePrevious() {
    // 4 per second: a slot every 250 ms; max_wait defaults to the period, a queue of 4.
    Script s = script(rule("lb").algorithm(Algorithm.LEAKY_BUCKET).window(4, ms(1000)).build());
    s.expect(0, 1, allowed(), ws(4, 1000, 4, 0, 250, false));
    s.expect(0, 1, allowedAfterWait(250), ws(4, 1000, 3, 0, 500, false));
    s.expect(0, 2, allowedAfterWait(500), ws(4, 1000, 1, 0, 1000, false));
    s.expect(0, 1, allowedAfterWait(1000), ws(4, 1000, 0, 0, 1250, false));
    s.expect(0, 1, denied(WAIT_EXCEEDS_MAX_WAIT, 250), ws(4, 1000, 0, 250, 1250, true));
    // The wait for a slot does not depend on the cost, so a peek is held to max_wait like any request.
    s.expect(0, 0, denied(WAIT_EXCEEDS_MAX_WAIT, 250), ws(4, 1000, 0, 250, 1250, true));
    s.expect(250, 1, allowedAfterWait(1000), ws(4, 1000, 0, 0, 1250, false));
    s.expect(2000, 1, allowed(), ws(4, 1000, 4, 0, 250, false));
    s.expect(2000, 0, allowedAfterWait(250), ws(4, 1000, 4, 0, 250, false));
    s.expect(2000, 5, denied(COST_EXCEEDS_LIMIT, NEVER), ws(4, 1000, 4, NEVER, 250, true));
  }

  @Test
  void leakyBucketWithoutMaxWaitPolicesInsteadOfShaping() {
    Script s = script(rule("lb0").algorithm(Algorithm.LEAKY_BUCKET).maxWait(Duration.ZERO).window(4, ms(1000)).build());
    s.expect(0, 1, allowed(), ws(4, 1000, 0, 0, 250, false));
    s.expect(100, 1, denied(WAIT_EXCEEDS_MAX_WAIT, 150), ws(4, 1000, 0, 150, 150, true));
    s.expect(250, 1, allowed(), ws(4, 1000, 0, 0, 250, false));
    s.expect(600, 1, allowed(), ws(4, 1000, 0, 0, 250, false));
    s.expect(900, 0, allowed(), ws(4, 1000, 1, 0, 0, false));
  }

  @Test
  void leakyBucketStartsARequestAtTheLatestSlotOfAllItsWindows() {
    // Slots every 250 ms in the first window and every 500 ms in the second; max_wait 1 s.
    Script s = script(rule("lb2").algorithm(Algorithm.LEAKY_BUCKET).window(4, ms(1000)).window(2, ms(1000)).build());
    s.expect(0, 1, allowed(), ws(4, 1000, 4, 0, 250, false), ws(2, 1000, 2, 0, 500, false));
    s.expect(0, 1, allowedAfterWait(500), ws(4, 1000, 2, 0, 750, false), ws(2, 1000, 1, 0, 1000, false));
    s.expect(0, 1, allowedAfterWait(1000), ws(4, 1000, 0, 0, 1250, false), ws(2, 1000, 0, 0, 1500, false));
    s.expect(0, 1, denied(WAIT_EXCEEDS_MAX_WAIT, 500), ws(4, 1000, 0, 250, 1250, true),
        ws(2, 1000, 0, 500, 1500, true));
    s.expect(500, 1, allowedAfterWait(1000), ws(4, 1000, 0, 0, 1250, false), ws(2, 1000, 0, 0, 1500, false));
  }

  /**
   * SPEC §1: 20 per minute and 5 per 3 seconds, 8 requests in the first second. The five first
   * pass; the next three are denied by the 3 s window alone, and the minute window stays at 15
   * because a denial consumes nothing.
   */
  @Test
  void deniedRequestConsumesNothingInOtherWindows() {
    assumeSupported(Algorithm.SLIDING_LOG);
    Rule createToken = rule("auth.createToken").window(20, Duration.ofSeconds(60)).window(5, Duration.ofSeconds(3))
        .build();
    RateLimiter limiter = limiter(createToken);
    long[][] expected = {{19, 4}, {18, 3}, {17, 2}, {16, 1}, {15, 0}};
    for (int i = 0; i < 5; i++) {
      Decision d = at(limiter, i * 100L, Item.of(createToken.name(), "user:1"));
      assertThat(d.allowed()).as("request %d", i + 1).isTrue();
      assertThat(d.items().get(0).windows()).extracting(WindowState::remaining)
          .as("request %d", i + 1).containsExactly(expected[i][0], expected[i][1]);
    }
    for (int i = 5; i < 8; i++) {
      long t = i * 100L;
      Decision d = at(limiter, t, Item.of(createToken.name(), "user:1"));
      assertThat(d.allowed()).as("request %d", i + 1).isFalse();
      assertThat(d.items().get(0).windows()).as("request %d", i + 1).containsExactly(
          ws(20, 60_000, 15, 0, 60_400 - t, false),
          ws(5, 3000, 0, 3000 - t, 3400 - t, true));
      assertThat(d.retryAfterMs()).isEqualTo(3000 - t);
    }
    // The request of 0 leaves the 3 s window at 3000.
    Decision d = at(limiter, 2999, Item.of(createToken.name(), "user:1"));
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(1);
    d = at(limiter, 3000, Item.of(createToken.name(), "user:1"));
    assertThat(d.allowed()).isTrue();
    assertThat(d.items().get(0).windows()).extracting(WindowState::remaining).containsExactly(14L, 0L);
  }

  /** The SPEC §1 scenario under the other counting algorithms: the same five pass, the same three do not. */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "SLIDING_WINDOW", "FIXED_WINDOW"})
  void multiWindowScenarioHoldsForEveryCountingAlgorithm(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("multi").algorithm(algorithm).window(20, Duration.ofSeconds(60)).window(5, Duration.ofSeconds(3))
        .build();
    RateLimiter limiter = limiter(rule);
    for (int i = 0; i < 5; i++) {
      Decision d = at(limiter, i * 100L, Item.of(rule.name(), "user:1"));
      assertThat(d.allowed()).isTrue();
      assertThat(d.items().get(0).windows()).extracting(WindowState::remaining).containsExactly(19L - i, 4L - i);
    }
    // Sub-buckets of the 3 s window are 300 ms wide: the bucket of 0 leaves it at 3300.
    long frees = algorithm == Algorithm.SLIDING_WINDOW ? 3300 : 3000;
    for (int i = 5; i < 8; i++) {
      Decision d = at(limiter, i * 100L, Item.of(rule.name(), "user:1"));
      assertThat(d.allowed()).isFalse();
      WindowState minute = d.items().get(0).windows().get(0);
      WindowState three = d.items().get(0).windows().get(1);
      assertThat(minute.exceeded()).isFalse();
      assertThat(minute.remaining()).isEqualTo(15);
      assertThat(three.exceeded()).isTrue();
      assertThat(three.remaining()).isZero();
      assertThat(d.retryAfterMs()).isEqualTo(frees - i * 100L);
    }
    Decision d = at(limiter, frees, Item.of(rule.name(), "user:1"));
    assertThat(d.allowed()).isTrue();
    // Sliding log: 100..400 still in (0, 3000]; sliding window: the bucket [300, 600) still counts; fixed: a new window.
    long threeSecondsLeft = switch (algorithm) {
      case SLIDING_LOG -> 0;
      case SLIDING_WINDOW -> 2;
      default -> 4;
    };
    assertThat(d.items().get(0).windows()).extracting(WindowState::remaining).containsExactly(14L, threeSecondsLeft);
  }
}
