package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** acquireBlocking sleeps exactly what decisions say, through the injected sleeper, never polling. */
class AcquireBlockingTest {
  final FakeTicker ticker = new FakeTicker();
  final List<Long> sleeps = new ArrayList<>();
  final Rule once = Rule.builder("once").window(1, Duration.ofSeconds(1)).build();
  final Rule shaped = Rule.builder("shaped").algorithm(Algorithm.LEAKY_BUCKET).window(2, Duration.ofSeconds(1))
      .build();
  final Rule both = Rule.builder("both").window(1, Duration.ofSeconds(1)).window(2, Duration.ofSeconds(10)).build();
  RateLimiter limiter = limiter(millis -> {
    sleeps.add(millis);
    ticker.sleep(millis);
  });

  RateLimiter limiter(Sleeper sleeper) {
    return Sluice.builder().rules(once, shaped, both).ticker(ticker).sleeper(sleeper).build();
  }

  @Test
  void sleepsExactlyTheRetryAfterThenAdmits() throws InterruptedException {
    assertThat(limiter.acquire("once", "k").allowed()).isTrue();
    ticker.advanceMillis(250);
    Decision d = limiter.acquireBlocking(Request.of("once", "k"), Duration.ofSeconds(1));
    assertThat(d.allowed()).isTrue();
    assertThat(sleeps).containsExactly(750L);
  }

  @Test
  void timeoutEqualToTheRetryIsEnough() throws InterruptedException {
    limiter.acquire("once", "k");
    assertThat(limiter.acquireBlocking(Request.of("once", "k"), Duration.ofMillis(1000)).allowed()).isTrue();
    assertThat(sleeps).containsExactly(1000L);
  }

  @Test
  void returnsTheDenialWithoutSleepingWhenTheTimeoutIsShorter() throws InterruptedException {
    limiter.acquire("once", "k");
    Decision d = limiter.acquireBlocking(Request.of("once", "k"), Duration.ofMillis(999));
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(1000);
    assertThat(sleeps).isEmpty();
  }

  @Test
  void waitsForTheLongestDenyingWindow() throws InterruptedException {
    limiter.acquire("both", "k");
    ticker.advanceMillis(1000);
    limiter.acquire("both", "k");
    Decision d = limiter.acquireBlocking(Request.of("both", "k"), Duration.ofSeconds(10));
    assertThat(d.allowed()).isTrue();
    assertThat(sleeps).containsExactly(9000L);
  }

  @Test
  void sleepsTheWaitOfAnAdmittedShapingDecision() throws InterruptedException {
    assertThat(limiter.acquireBlocking(Request.of("shaped", "k"), Duration.ofSeconds(1)).waitMs()).isZero();
    Decision d = limiter.acquireBlocking(Request.of("shaped", "k"), Duration.ofSeconds(1));
    assertThat(d.allowed()).isTrue();
    assertThat(d.waitMs()).isEqualTo(500);
    assertThat(sleeps).containsExactly(500L);
  }

  @Test
  void triesAgainWhenOtherTrafficTookTheRoomMeanwhile() throws InterruptedException {
    List<Long> slept = new ArrayList<>();
    RateLimiter[] self = new RateLimiter[1];
    self[0] = limiter(millis -> {
      slept.add(millis);
      ticker.sleep(millis);
      if (slept.size() == 1) {
        assertThat(self[0].acquire("once", "k").allowed()).as("another caller takes the freed unit").isTrue();
      }
    });
    self[0].acquire("once", "k");
    Decision d = self[0].acquireBlocking(Request.of("once", "k"), Duration.ofSeconds(2));
    assertThat(d.allowed()).isTrue();
    assertThat(slept).containsExactly(1000L, 1000L);
  }

  @Test
  void timeoutCountsEverySleep() throws InterruptedException {
    List<Long> slept = new ArrayList<>();
    RateLimiter[] self = new RateLimiter[1];
    self[0] = limiter(millis -> {
      slept.add(millis);
      ticker.sleep(millis);
      self[0].acquire("once", "k");
    });
    self[0].acquire("once", "k");
    Decision d = self[0].acquireBlocking(Request.of("once", "k"), Duration.ofMillis(1999));
    assertThat(d.allowed()).isFalse();
    assertThat(slept).containsExactly(1000L);
  }

  @Test
  void neverSleepsForACostThatCanNeverFit() throws InterruptedException {
    Decision d = limiter.acquireBlocking(Request.of("once", "k", 2), Duration.ofDays(1));
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(WindowState.NEVER);
    assertThat(sleeps).isEmpty();
  }

  @Test
  void interruptionEndsTheWait() {
    RateLimiter interrupted = limiter(millis -> {
      throw new InterruptedException();
    });
    interrupted.acquire("once", "k");
    assertThatThrownBy(() -> interrupted.acquireBlocking(Request.of("once", "k"), Duration.ofSeconds(5)))
        .isInstanceOf(InterruptedException.class);
  }
}
