package dev.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Degraded decisions are logged, at most one line per rule every 10 s, and counted. */
class DegradedDecisionLogTest {
  final FakeTicker ticker = new FakeTicker();
  final FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
  final List<String> lines = new CopyOnWriteArrayList<>();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final Rule open = Rule.builder("open").window(100, Duration.ofMinutes(1)).failureMode(FailureMode.OPEN).build();
  final Rule closed = Rule.builder("closed").window(100, Duration.ofMinutes(1)).failureMode(FailureMode.CLOSED).build();
  final RateLimiter limiter = Sluice.builder().rules(open, closed).store(store).ticker(ticker)
      .listener(new DegradedDecisionLog(ticker, lines::add)).listener(new SluiceMetrics(registry)).build();

  @AfterEach
  void close() {
    limiter.close();
  }

  private void decide(String rule, int times) {
    for (int i = 0; i < times; i++) {
      limiter.acquire(Request.of(rule, "k" + i));
    }
  }

  @Test
  void degradedDecisionsAreLoggedAtMostOncePerRuleEveryTenSecondsWithTheCountsSinceTheLastLine() {
    decide("open", 3);
    assertThat(lines).as("a store that answers is not logged").isEmpty();

    store.mode(FlakyStore.Mode.FAILS);
    decide("open", 1);
    assertThat(lines).containsExactly("rule 'open': 1 degraded decision (1 allowed, 0 denied), decided by its "
        + "failure_mode because the store failed: store refused the connection");
    decide("open", 40);
    decide("closed", 2);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(1)).startsWith("rule 'closed': 1 degraded decision (0 allowed, 1 denied)");

    ticker.advance(Duration.ofMillis(9_999));
    decide("open", 1);
    assertThat(lines).as("not before ten seconds").hasSize(2);
    ticker.advance(Duration.ofMillis(1));
    decide("open", 1);
    assertThat(lines).hasSize(3);
    assertThat(lines.get(2)).isEqualTo("rule 'open': 42 degraded decisions in the last 10.0 s (42 allowed, 0 denied), "
        + "decided by its failure_mode because the store failed: store refused the connection");

    assertThat(registry.get("sluice.decisions").tag("rule", "open").tag("outcome", "degraded").counter().count())
        .as("every one is counted").isEqualTo(43);
    assertThat(registry.get("sluice.store.errors.by.kind").tag("kind", "unavailable").counter().count())
        .isEqualTo(45);
  }

  @Test
  void storeErrorsAreCountedByKind() {
    store.mode(FlakyStore.Mode.HANGS);
    RateLimiter slow = Sluice.builder().rules(open).store(store).ticker(ticker).storeTimeout(Duration.ofMillis(1))
        .listener(new SluiceMetrics(registry)).build();
    slow.acquire(Request.of("open", "k"));
    assertThat(registry.get("sluice.store.errors.by.kind").tag("kind", "timeout").counter().count()).isEqualTo(1);
    RateLimiter bounded = Sluice.builder().rules(open).store(store).ticker(ticker).storeTimeout(Duration.ofMillis(1))
        .maxInFlight(1).listener(new SluiceMetrics(registry)).build();
    bounded.acquire(Request.of("open", "k"));
    bounded.acquire(Request.of("open", "k"));
    assertThat(registry.get("sluice.store.errors.by.kind").tag("kind", "overloaded").counter().count()).isEqualTo(1);
  }
}
