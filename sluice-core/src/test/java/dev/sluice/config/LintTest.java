package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class LintTest {

  static Window w(long limit, long seconds) {
    return Window.perSeconds(limit, seconds);
  }

  static List<String> lint(Algorithm a, Window... ws) {
    return Lint.windows(a, Rule.DEFAULT_PRECISION, List.of(ws)).stream().map(Lint.Finding::message).toList();
  }

  @Test
  void specLintExampleFlagsTheLongWindow() {
    assertThat(lint(Algorithm.SLIDING_LOG, w(600, 600), w(10, 10))).containsExactly(
        "window 1 (600/600s) can never bind: window 2 (10/10s) already caps any 600s at 10 × ⌈600s/10s⌉ = 600, "
            + "within its limit of 600");
  }

  @Test
  void specExampleRulesAreClean() {
    for (Algorithm a : Algorithm.values()) {
      if (a == Algorithm.TOKEN_BUCKET || a == Algorithm.LEAKY_BUCKET) {
        continue; // as buckets, 20/60s (one unit per 3s) with a burst of 20 vs 5/3s: see below
      }
      assertThat(lint(a, w(20, 60), w(5, 3))).as(a.configName()).isEmpty();
      assertThat(lint(a, w(600, 600), w(30, 20))).as(a.configName()).isEmpty();
    }
  }

  @Test
  void slidingLogConditionIsExactAtTheBoundary() {
    assertThat(lint(Algorithm.SLIDING_LOG, w(599, 600), w(10, 10))).isEmpty();
    assertThat(lint(Algorithm.SLIDING_LOG, w(601, 600), w(10, 10))).hasSize(1);
    // ⌈25/10⌉ = 3 windows of 10s cover any 25s: 3 × 10 = 30.
    assertThat(lint(Algorithm.SLIDING_LOG, w(29, 25), w(10, 10))).isEmpty();
    assertThat(lint(Algorithm.SLIDING_LOG, w(30, 25), w(10, 10))).containsExactly(
        "window 1 (30/25s) can never bind: window 2 (10/10s) already caps any 25s at 10 × ⌈25s/10s⌉ = 30, "
            + "within its limit of 30");
  }

  @Test
  void aShorterWindowWithMoreRoomNeverBindsUnderALongerStricterOne() {
    assertThat(lint(Algorithm.SLIDING_LOG, w(10, 10), w(5, 30))).containsExactly(
        "window 1 (10/10s) can never bind: window 2 (5/30s) is at least as long and allows no more (5 ≤ 10)");
    assertThat(lint(Algorithm.SLIDING_LOG, w(4, 10), w(5, 30))).isEmpty();
  }

  @Test
  void duplicatesAreReportedOnceOnTheLaterCopy() {
    assertThat(lint(Algorithm.SLIDING_LOG, w(5, 3), w(20, 60), w(5, 3)))
        .containsExactly("window 3 (5/3s) duplicates window 1");
  }

  @Test
  void fixedWindowsCountAlignedWindows() {
    assertThat(lint(Algorithm.FIXED_WINDOW, w(600, 600), w(10, 10))).containsExactly(
        "window 1 (600/600s) can never bind: window 2 (10/10s) fits 60 aligned windows in each aligned 600s, "
            + "allowing at most 60 × 10 = 600, within its limit of 600");
    // 25s is not a multiple of 10s: an aligned 25s window meets up to 4 aligned 10s windows.
    assertThat(lint(Algorithm.FIXED_WINDOW, w(39, 25), w(10, 10))).isEmpty();
    assertThat(lint(Algorithm.FIXED_WINDOW, w(40, 25), w(10, 10))).hasSize(1);
    // Nested: each aligned 10s window lies inside one aligned 30s window.
    assertThat(lint(Algorithm.FIXED_WINDOW, w(10, 10), w(5, 30))).hasSize(1);
    // Not nested: a 10s window can straddle two aligned 25s windows.
    assertThat(lint(Algorithm.FIXED_WINDOW, w(9, 10), w(5, 25))).isEmpty();
    assertThat(lint(Algorithm.FIXED_WINDOW, w(10, 10), w(5, 25))).hasSize(1);
  }

  @Test
  void slidingWindowsAccountForTheExtraBucket() {
    // 600/600s at precision 10 counts eleven 60s buckets (up to 660s): 10/10s allows 660 there.
    assertThat(lint(Algorithm.SLIDING_WINDOW, w(600, 600), w(10, 10))).isEmpty();
    assertThat(lint(Algorithm.SLIDING_WINDOW, w(660, 600), w(10, 10))).containsExactly(
        "window 1 (660/600s) can never bind: window 2 (10/10s) already caps the 660s that window counts "
            + "(precision 10) at 10 × ⌈660s/10s⌉ = 660, within its limit of 660");
    assertThat(lint(Algorithm.SLIDING_WINDOW, w(10, 10), w(5, 30))).hasSize(1);
    assertThat(lint(Algorithm.SLIDING_WINDOW, w(10, 30), w(5, 30))).containsExactly(
        "window 1 (10/30s) can never bind: window 2 (5/30s) uses the same buckets and allows no more (5 ≤ 10)");
  }

  @Test
  void bucketsCompareRatesAndCapacities() {
    // Both refill one unit per second; 600/600s holds more, so 10/10s always empties first.
    assertThat(lint(Algorithm.TOKEN_BUCKET, w(600, 600), w(10, 10))).containsExactly(
        "window 1 (600/600s) can never bind: window 2 (10/10s) refills no faster (one unit per 1s vs 1s) and holds "
            + "no more (10 ≤ 600)");
    // 20/60s refills slower than 5/3s but holds more: each can bind.
    assertThat(lint(Algorithm.TOKEN_BUCKET, w(20, 60), w(5, 3))).isEmpty();
    // As a shaper, 5/3s spaces requests 600ms apart and 20/60s 3s apart, but 5/3s alone denies costs of 6 to 20.
    assertThat(lint(Algorithm.LEAKY_BUCKET, w(20, 60), w(5, 3))).isEmpty();
    assertThat(lint(Algorithm.LEAKY_BUCKET, w(10, 10), w(60, 60))).containsExactly(
        "window 2 (60/60s) can never bind: window 1 (10/10s) spaces requests no closer (one unit per 1s vs 1s) "
            + "and holds no more (10 ≤ 60)");
  }

  @Test
  void windowsWithTheSameEffectAreReportedOnlyOnce() {
    // 3 units per 10s and 3 per 10.000001s both refill one unit per 3333334 µs.
    Window a = Window.perSeconds(3, 10);
    Window b = Window.of(3, Duration.ofNanos(10_000_001_000L));
    assertThat(Lint.windows(Algorithm.TOKEN_BUCKET, 10, List.of(a, b))).extracting(Lint.Finding::window)
        .containsExactly(1);
  }

  /**
   * Soundness against the reference implementation: whenever lint says window A can never bind
   * given window B, the rule {A, B} decides every random trace exactly as the rule {B} alone.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aWindowThatCanNeverBindNeverChangesADecision(Algorithm algorithm) {
    SplittableRandom random = new SplittableRandom(algorithm.ordinal() * 7919L + 17);
    int flagged = 0;
    long[] outcomes = new long[2]; // denied, allowed
    for (int pair = 0; pair < 400 && flagged < 60; pair++) {
      Window a = Window.perMillis(1 + random.nextInt(30), 100L * (1 + random.nextInt(40)));
      Window b = Window.perMillis(1 + random.nextInt(12), 100L * (1 + random.nextInt(40)));
      if (a.equals(b) || Lint.neverBinds(algorithm, 4, a, b) == null) {
        continue;
      }
      flagged++;
      Rule both = Rule.builder("r").algorithm(algorithm).window(a).window(b).build();
      Rule alone = Rule.builder("r").algorithm(algorithm).window(b).build();
      if (algorithm == Algorithm.SLIDING_WINDOW) {
        both = both.toBuilder().precision(4).build();
        alone = alone.toBuilder().precision(4).build();
      }
      if (algorithm == Algorithm.LEAKY_BUCKET) {
        // Both must queue alike: the default max_wait is the longest period, which differs.
        both = both.toBuilder().maxWait(Duration.ofMillis(1500)).build();
        alone = alone.toBuilder().maxWait(Duration.ofMillis(1500)).build();
      }
      assertSameDecisions(both, alone, random.split(), a + " given " + b, outcomes);
    }
    assertThat(flagged).as("pairs flagged for " + algorithm).isGreaterThan(20);
    // The traces must exercise both outcomes, or equal decisions would prove nothing.
    assertThat(outcomes[0]).as("denials").isGreaterThan(100);
    assertThat(outcomes[1]).as("admissions").isGreaterThan(100);
  }

  @Test
  void aWindowThatLintKeepsCanChangeADecision() {
    // 599/600s + 10/10s: bursts of 10 every 10s reach 600 in 600s, which only the long window denies.
    Rule both = Rule.builder("r").window(599, Duration.ofSeconds(600)).window(10, Duration.ofSeconds(10)).build();
    Rule alone = Rule.builder("r").window(10, Duration.ofSeconds(10)).build();
    try (RateLimiter x = Sluice.builder().rules(both).build(); RateLimiter y = Sluice.builder().rules(alone).build()) {
      long t = 1_000_000_000_000L;
      for (int burst = 0; burst < 60; burst++) {
        Request r = Request.of("r", "k", 10).atMillis(t + burst * 10_000L);
        Decision dx = x.acquire(r);
        Decision dy = y.acquire(r);
        if (burst < 59) {
          assertThat(dx.allowed()).isTrue();
        } else {
          assertThat(dx.allowed()).isFalse();
          assertThat(dy.allowed()).isTrue();
        }
      }
    }
  }

  private static void assertSameDecisions(Rule both, Rule alone, SplittableRandom random, String what,
      long[] outcomes) {
    try (RateLimiter x = Sluice.builder().rules(both).build(); RateLimiter y = Sluice.builder().rules(alone).build()) {
      long t = 1_700_000_000_000_000L + random.nextLong(10_000_000);
      List<String> trace = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        // Bursts and pauses: most steps are short, some cross whole windows.
        t += random.nextInt(10) < 8 ? random.nextLong(150_000) : random.nextLong(5_000_000);
        long cost = random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(random.nextInt(4) + 1);
        Request r = Request.of("r", "k", cost).atMicros(t);
        Decision dx = x.acquire(r);
        Decision dy = y.acquire(r);
        trace.add(t + ":" + cost);
        assertThat(dx.allowed()).as("%s at request %d %s", what, i, trace).isEqualTo(dy.allowed());
        assertThat(dx.waitMs()).as("%s wait at request %d", what, i).isEqualTo(dy.waitMs());
        outcomes[dx.allowed() ? 1 : 0]++;
      }
    }
  }
}
