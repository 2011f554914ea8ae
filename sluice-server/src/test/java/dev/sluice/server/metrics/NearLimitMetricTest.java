package dev.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testing.FakeTicker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** SPEC §9: near-limit means an admitted decision left some window under 20% of its limit. */
class NearLimitMetricTest {

  @Test
  void nearLimitCountsAdmittedDecisionsThatLeaveAWindowUnderTwentyPercent() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Rule rule = Rule.builder("api").window(10, Duration.ofMinutes(1)).window(100, Duration.ofHours(1)).build();
    try (RateLimiter limiter = Sluice.builder().rules(rule).ticker(new FakeTicker())
        .listener(new SluiceMetrics(registry)).build()) {
      // 2 of 10 left is 20%, not under it.
      assertThat(limiter.acquire("api", "k", 8).allowed()).isTrue();
      assertThat(nearLimit(registry)).isZero();
      assertThat(limiter.acquire("api", "k").allowed()).isTrue();
      assertThat(nearLimit(registry)).isEqualTo(1);
      assertThat(limiter.acquire("api", "k").allowed()).isTrue();
      assertThat(nearLimit(registry)).isEqualTo(2);
      // A denial is counted as denied, not as near the limit.
      assertThat(limiter.acquire("api", "k").allowed()).isFalse();
      assertThat(nearLimit(registry)).isEqualTo(2);
      assertThat(registry.get("sluice.decisions").tag("rule", "api").tag("outcome", "denied").counter().count())
          .isEqualTo(1);
    }
  }

  private static double nearLimit(SimpleMeterRegistry registry) {
    Counter c = registry.find("sluice.near.limit").tag("rule", "api").counter();
    return c == null ? 0 : c.count();
  }
}
