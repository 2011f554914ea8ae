package dev.sluice.algorithm;

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
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A key's state reuses one scratch space for every evaluation: nothing of a denial may show in
 * the decisions that follow it.
 */
class EvalTest {

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void anAdmissionAfterADenialReportsNoReasonAndNoExceededWindow(Algorithm algorithm) {
    FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
    Rule.Builder rule = Rule.builder("r").algorithm(algorithm).window(1, Duration.ofSeconds(1))
        .window(100, Duration.ofMinutes(1));
    if (algorithm == Algorithm.LEAKY_BUCKET) {
      rule.maxWait(Duration.ZERO);
    }
    try (RateLimiter l = Sluice.builder().rules(rule.build()).store(MemoryStore.builder().ticker(ticker).build())
        .ticker(ticker).build()) {
      assertThat(l.acquire(Request.of("r", "k")).allowed()).isTrue();
      Decision denied = l.acquire(Request.of("r", "k"));
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.items().get(0).windows().get(0).exceeded()).isTrue();
      assertThat(l.acquire(Request.of("r", "k", 2)).items().get(0).reason()).isEqualTo(DenyReason.COST_EXCEEDS_LIMIT);

      ticker.advanceMillis(2_000);
      ItemDecision admitted = l.acquire(Request.of("r", "k")).items().get(0);
      assertThat(admitted.allowed()).isTrue();
      assertThat(admitted.reason()).isEqualTo(DenyReason.NONE);
      assertThat(admitted.waitMs()).isZero();
      assertThat(admitted.windows()).extracting(WindowState::exceeded).containsOnly(false);
      assertThat(admitted.windows()).extracting(WindowState::retryAfterMs).containsOnly(0L);
    }
  }
}
