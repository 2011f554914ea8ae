package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Window;
import dev.sluice.conformance.Bounds.Admission;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bound checks must be able to fail: each is fed a history just inside and just over its bound. */
class BoundsTest {
  private static final Window TWO_PER_MS = Window.perMillis(2, 1);

  @Test
  void rollingBoundCountsTheIntervalOpenOnTheLeft() {
    assertThatCode(() -> Bounds.atMostLimitInEveryPeriod(
        List.of(Admission.at(0, 1), Admission.at(0, 1), Admission.at(1000, 2)), TWO_PER_MS)).doesNotThrowAnyException();
    assertThatThrownBy(() -> Bounds.atMostLimitInEveryPeriod(
        List.of(Admission.at(0, 1), Admission.at(999, 1), Admission.at(999, 1)), TWO_PER_MS))
        .isInstanceOf(AssertionError.class).hasMessageContaining("admitted 3");
  }

  @Test
  void alignedBoundResetsAtMultiplesOfThePeriod() {
    assertThatCode(() -> Bounds.atMostLimitPerAlignedWindow(
        List.of(Admission.at(999, 2), Admission.at(1000, 2)), TWO_PER_MS)).doesNotThrowAnyException();
    assertThatThrownBy(() -> Bounds.atMostLimitPerAlignedWindow(
        List.of(Admission.at(1000, 2), Admission.at(1999, 1)), TWO_PER_MS)).isInstanceOf(AssertionError.class);
  }

  @Test
  void spanBoundAllowsTheBurstPlusTheRefill() {
    // L + d·L/P over [0, 500 µs] is 2 + 1 = 3.
    assertThatCode(() -> Bounds.atMostLimitPlusRefillInEverySpan(
        List.of(Admission.at(0, 2), Admission.at(500, 1)), TWO_PER_MS)).doesNotThrowAnyException();
    assertThatThrownBy(() -> Bounds.atMostLimitPlusRefillInEverySpan(
        List.of(Admission.at(0, 2), Admission.at(499, 1)), TWO_PER_MS)).isInstanceOf(AssertionError.class);
  }

  @Test
  void startsMustBeSpacedByThePreviousCostTimesTheInterval() {
    assertThatCode(() -> Bounds.startsSpacedByTheEmissionInterval(
        List.of(new Admission(0, 0, 2), new Admission(0, 1000, 1)), TWO_PER_MS)).doesNotThrowAnyException();
    assertThatThrownBy(() -> Bounds.startsSpacedByTheEmissionInterval(
        List.of(new Admission(0, 0, 2), new Admission(0, 999, 1)), TWO_PER_MS)).isInstanceOf(AssertionError.class);
    assertThatThrownBy(() -> Bounds.noWaitAbove(List.of(new Admission(0, 1001, 1)), 1000))
        .isInstanceOf(AssertionError.class);
  }
}
