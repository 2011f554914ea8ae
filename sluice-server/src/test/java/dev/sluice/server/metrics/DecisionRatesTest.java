package dev.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The dashboard's counts: those of the metrics, and a ring of buckets rolled on read, bounded per bucket. */
class DecisionRatesTest {
  final FakeTicker ticker = new FakeTicker();
  final DecisionRates rates = new DecisionRates(ticker);
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final List<RateLimiter> limiters = new ArrayList<>();

  RateLimiter limiter(Rule... rules) {
    RateLimiter l = Sluice.builder().rules(rules).store(MemoryStore.builder().ticker(ticker).build()).ticker(ticker)
        .listener(rates).listener(new SluiceMetrics(registry)).build();
    limiters.add(l);
    return l;
  }

  @AfterEach
  void close() {
    limiters.forEach(RateLimiter::close);
  }

  private double metric(String rule, String outcome) {
    return registry.get("sluice.decisions").tag("rule", rule).tag("outcome", outcome).counter().count();
  }

  @Test
  void countsAreTheMetricsOnesAndLandInTheBucketOfTheirRead() {
    Rule r = Rule.builder("r").window(2, Duration.ofHours(1)).build();
    Rule shadow = Rule.builder("s").window(1, Duration.ofHours(1)).shadow(true).build();
    RateLimiter l = limiter(r, shadow);
    assertThat(rates.read().series()).isEmpty();
    for (int i = 0; i < 3; i++) {
      l.acquire("r", "k");
      l.acquire("s", "k");
    }
    DecisionRates.Snapshot first = rates.read();
    long[] totals = first.totals().get("r");
    assertThat(totals[DecisionRates.ALLOWED]).isEqualTo(2).isEqualTo((long) metric("r", "allowed"));
    assertThat(totals[DecisionRates.DENIED]).isEqualTo(1).isEqualTo((long) metric("r", "denied"));
    assertThat(totals[DecisionRates.NEAR_LIMIT]).isEqualTo(1)
        .isEqualTo((long) registry.get("sluice.near.limit").tag("rule", "r").counter().count());
    assertThat(first.totals().get("s")[DecisionRates.SHADOW_DENIED]).isEqualTo(2)
        .isEqualTo((long) metric("s", "shadow_denied"));
    assertThat(first.series().get("r")[DecisionRates.BUCKETS - 1]).containsExactly(2, 1, 0, 0, 1);

    ticker.advance(Duration.ofSeconds(DecisionRates.BUCKET_SECONDS * 2));
    l.acquire("r", "k");
    DecisionRates.Snapshot second = rates.read();
    long[][] series = second.series().get("r");
    assertThat(series[DecisionRates.BUCKETS - 1]).containsExactly(0, 1, 0, 0, 0);
    assertThat(series[DecisionRates.BUCKETS - 2]).containsExactly(0, 0, 0, 0, 0);
    assertThat(series[DecisionRates.BUCKETS - 3]).containsExactly(2, 1, 0, 0, 1);
    // Read again in the same bucket: nothing counted twice.
    assertThat(rates.read().series().get("r")[DecisionRates.BUCKETS - 1]).containsExactly(0, 1, 0, 0, 0);

    ticker.advance(Duration.ofSeconds((long) DecisionRates.BUCKET_SECONDS * DecisionRates.BUCKETS));
    DecisionRates.Snapshot later = rates.read();
    assertThat(later.series()).isEmpty();
    assertThat(later.totals().get("r")[DecisionRates.DENIED]).isEqualTo(2);
  }

  @Test
  void aBucketKeepsTheBusiestRulesAndSumsTheRest() {
    int n = DecisionRates.RULES_PER_BUCKET + 100;
    Rule[] rules = new Rule[n];
    for (int i = 0; i < n; i++) {
      rules[i] = Rule.builder("rule" + i).window(1_000, Duration.ofHours(1)).build();
    }
    RateLimiter l = limiter(rules);
    rates.read();
    for (int i = 0; i < n; i++) {
      // The first 100 rules are the busiest.
      for (int j = 0; j < (i < 100 ? 3 : 1); j++) {
        l.acquire("rule" + i, "k");
      }
    }
    DecisionRates.Snapshot s = rates.read();
    assertThat(s.series()).hasSize(DecisionRates.RULES_PER_BUCKET + 1).containsKey(DecisionRates.OTHERS);
    for (int i = 0; i < 100; i++) {
      assertThat(s.series()).containsKey("rule" + i);
    }
    long sum = s.series().values().stream().mapToLong(v -> v[DecisionRates.BUCKETS - 1][DecisionRates.ALLOWED]).sum();
    assertThat(sum).isEqualTo(100 * 3 + (n - 100));
  }
}
