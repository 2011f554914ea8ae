package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MultiWindowScenarioTest {
  final FakeTicker ticker = new FakeTicker();
  final Rule createToken = Rule.builder("auth.createToken")
      .window(20, Duration.ofSeconds(60))
      .window(5, Duration.ofSeconds(3))
      .build();
  final RateLimiter limiter = Sluice.builder().rules(createToken).ticker(ticker).build();

  @Test
  void deniedRequestConsumesNothingInOtherWindows() {
    long[][] expected = {{19, 4}, {18, 3}, {17, 2}, {16, 1}, {15, 0}};
    for (long[] e : expected) {
      Decision d = limiter.acquire("auth.createToken", "user:1");
      assertThat(d.allowed()).isTrue();
      assertThat(d.items().get(0).windows()).extracting(WindowState::remaining).containsExactly(e[0], e[1]);
      ticker.advanceMillis(100);
    }
    for (int i = 0; i < 3; i++) {
      Decision d = limiter.acquire("auth.createToken", "user:1");
      assertThat(d.allowed()).isFalse();
      WindowState minute = d.items().get(0).windows().get(0);
      WindowState three = d.items().get(0).windows().get(1);
      assertThat(minute.remaining()).isEqualTo(15);
      assertThat(minute.exceeded()).isFalse();
      assertThat(three.exceeded()).isTrue();
      assertThat(three.remaining()).isZero();
      assertThat(d.retryAfterMs()).isEqualTo(3000 - (500 + i * 100));
      ticker.advanceMillis(100);
    }
    // t = 800 ms; the first admission (t = 0) leaves the 3 s window at t = 3000 ms.
    ticker.advanceMillis(2200);
    Decision d = limiter.acquire("auth.createToken", "user:1");
    assertThat(d.allowed()).isTrue();
    assertThat(d.items().get(0).windows()).extracting(WindowState::remaining).containsExactly(14L, 0L);
  }
}
