package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** When the store's calls count as failing, for readiness. */
class StoreHealthTest {
  private final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  private final StoreHealth health = new StoreHealth(ticker);

  private void fail() {
    health.onStoreError(null, new TimeoutException("the store did not answer"));
    health.onDecision(null, Decision.of(List.of(), true), 0);
  }

  private void succeed() {
    health.onDecision(null, Decision.of(List.of(), false), 0);
  }

  /** Calls failing every 100 ms for {@code d}. */
  private void failFor(Duration d) {
    for (long t = 0; t <= d.toMillis(); t += 100) {
      fail();
      ticker.advanceMillis(100);
    }
  }

  @Test
  void aStoreWhoseCallsAllFailForASecondIsFailing() {
    assertThat(health.status().failing()).isFalse();
    failFor(Duration.ofMillis(500));
    assertThat(health.status().failing()).isFalse();
    failFor(Duration.ofMillis(600));
    StoreHealth.Status s = health.status();
    assertThat(s.failing()).isTrue();
    assertThat(s.failedCalls()).isEqualTo(13);
  }

  @Test
  void oneSuccessfulCallEndsTheFailureAtOnce() {
    failFor(Duration.ofSeconds(3));
    assertThat(health.status().failing()).isTrue();
    succeed();
    assertThat(health.status().failing()).isFalse();
    // A new run of failures has to last its second again.
    fail();
    ticker.advanceMillis(500);
    fail();
    fail();
    assertThat(health.status().failing()).isFalse();
  }

  @Test
  void aBurstOfFailuresIsNotAnOutage() {
    for (int i = 0; i < 50; i++) {
      fail();
    }
    ticker.advanceMillis(900);
    assertThat(health.status().failing()).isFalse();
  }

  @Test
  void twoFailuresASecondApartAreNotEnough() {
    fail();
    ticker.advance(Duration.ofSeconds(2));
    fail();
    assertThat(health.status().failing()).isFalse();
    fail();
    assertThat(health.status().failing()).isTrue();
  }

  @Test
  void failuresStopCountingOnceNoCallHasFailedForTheirTimeToLive() {
    // Taken out of rotation, an instance receives no calls: readiness must not stay failed for good.
    failFor(Duration.ofSeconds(2));
    ticker.advance(StoreHealth.EVIDENCE_TTL.minusMillis(200));
    assertThat(health.status().failing()).isTrue();
    ticker.advanceMillis(200);
    assertThat(health.status().failing()).isFalse();
    // Back in rotation, and still failing: one more failed call brings it back at once.
    fail();
    assertThat(health.status().failing()).isTrue();
  }
}
