package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every facade enforces the rule it was given, so the benchmarks compare like with like. */
class ContenderTest {

  @ParameterizedTest
  @EnumSource(value = Contender.class, names = {"SLUICE", "SLUICE_TOKEN_BUCKET", "SLUICE_DECISION", "BUCKET4J", "BUCKET4J_SYNCHRONIZED"})
  void twoWindowContendersStopAtTheShortWindowsLimit(Contender c) {
    try (KeyedLimiter l = c.create(RuleShape.TWO_WINDOWS)) {
      int admitted = 0;
      for (int i = 0; i < 10; i++) {
        admitted += l.tryAcquire("user:1") ? 1 : 0;
      }
      // 5 per 3 s binds first; a sixth unit would need 600 ms of refill, far longer than this loop
      assertThat(admitted).isEqualTo(5);
      assertThat(l.tryAcquire("user:2")).as("another key has its own budget").isTrue();
    }
  }

  @ParameterizedTest
  @EnumSource(value = Contender.class, names = "BASELINE", mode = EnumSource.Mode.EXCLUDE)
  void admittingShapesAdmitEveryDecisionOfAShortLoop(Contender c) {
    RuleShape shape = c.multiWindow() ? RuleShape.TWO_WINDOWS_ADMITTING : RuleShape.ONE_WINDOW_ADMITTING;
    try (KeyedLimiter l = c.create(shape)) {
      for (int i = 0; i < 10_000; i++) {
        assertThat(l.tryAcquire("user:" + (i % 3))).isTrue();
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = Contender.class, names = {"RESILIENCE4J", "GUAVA"})
  void singleRateLibrariesRefuseTwoWindows(Contender c) {
    assertThatThrownBy(() -> c.create(RuleShape.TWO_WINDOWS))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("2 windows");
  }

  @ParameterizedTest
  @EnumSource(value = Contender.class, names = {"SLUICE", "BUCKET4J", "RESILIENCE4J"})
  void oneWindowContendersStopAtTheLimit(Contender c) {
    try (KeyedLimiter l = c.create(RuleShape.ONE_WINDOW)) {
      int admitted = 0;
      for (int i = 0; i < 150; i++) {
        admitted += l.tryAcquire("k") ? 1 : 0;
      }
      // at most the limit plus what refills during the loop (one unit per 10 ms)
      assertThat(admitted).isBetween(100, 105);
    }
  }
}
