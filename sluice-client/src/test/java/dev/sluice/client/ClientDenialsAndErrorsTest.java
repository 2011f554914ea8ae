package dev.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.InvalidKeyException;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.UnknownRuleException;
import dev.sluice.memory.MemoryStore;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client's denial cache, its rules read from the service, and the service's refusals as the library's exceptions. */
class ClientDenialsAndErrorsTest {
  private static final Rule ONCE = Rule.builder("once").window(1, Duration.ofHours(1)).build();
  private static final Rule OTHER = Rule.builder("other").window(5, Duration.ofHours(1)).build();

  private ServiceUnderTest service;
  private SluiceClient client;

  @BeforeEach
  void start() {
    service = ServiceUnderTest.start(MemoryStore.builder().build(), false, Duration.ofSeconds(5));
    service.putRules(RuleSet.of(ONCE, OTHER));
    client = SluiceClient.builder().endpoints(service.address()).storeTimeout(Duration.ofSeconds(5))
        .rulesRefresh(Duration.ofMillis(50)).build();
  }

  @AfterEach
  void stop() {
    client.close();
    service.close();
  }

  /** Decisions the service made of {@code rule}, from its metrics. */
  private double decidedByTheService(String rule) {
    return service.service().registry().find("sluice.decisions").tag("rule", rule).counters().stream()
        .mapToDouble(Counter::count).sum();
  }

  @Test
  void aKnownDenialIsAnsweredByTheClientWithoutARoundTrip() {
    assertThat(client.acquire("once", "k").allowed()).isTrue();
    Decision fromService = client.acquire("once", "k");
    assertThat(fromService.allowed()).isFalse();
    assertThat(decidedByTheService("once")).isEqualTo(2);

    for (int i = 0; i < 3; i++) {
      Decision cached = client.acquire("once", "k");
      assertThat(cached.allowed()).isFalse();
      assertThat(cached.degraded()).isFalse();
      assertThat(cached.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
      assertThat(cached.retryAfterMs()).isPositive().isLessThanOrEqualTo(fromService.retryAfterMs());
    }
    assertThat(decidedByTheService("once")).as("the cached denials never reached the service").isEqualTo(2);
    // Another key, or a peek, still asks the service.
    assertThat(client.acquire("once", "j").allowed()).isTrue();
    assertThat(decidedByTheService("once")).isEqualTo(3);
  }

  @Test
  void theRulesAreTheServicesAndFollowItsConfiguration() {
    assertThat(client.rules().get("once")).isEqualTo(ONCE);
    assertThatThrownBy(() -> client.updateRules(RuleSet.of(ONCE)))
        .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("configuration");

    Rule added = Rule.builder("added").window(3, Duration.ofMinutes(1)).build();
    service.putRules(RuleSet.of(ONCE, added));
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (client.rules().get("added") == null && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(client.rules().get("added")).isEqualTo(added);
    assertThat(client.rules().get("other")).isNull();
    assertThat(client.acquire("added", "k").items().get(0).windows().get(0).remaining()).isEqualTo(2);
  }

  @Test
  void aRuleTheServiceNoLongerHasFailsAsAnUnknownRule() {
    // Refreshed only when told: the client still believes in 'other' when the service drops it.
    SluiceClient stale = SluiceClient.builder().endpoints(service.address()).rulesRefresh(Duration.ofHours(1))
        .build();
    try {
      service.putRules(RuleSet.of(ONCE));
      assertThat(stale.rules().get("other")).isNotNull();
      assertThatThrownBy(() -> stale.acquire("other", "k")).isInstanceOf(UnknownRuleException.class)
          .hasMessage("unknown rule 'other'");
      assertThatThrownBy(() -> stale.acquire("nowhere", "k")).isInstanceOf(UnknownRuleException.class);
      assertThatThrownBy(() -> stale.acquire("once", "")).isInstanceOf(InvalidKeyException.class);
      // Told by the service, the client reads the rules again.
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (stale.rules().get("other") != null && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertThat(stale.rules().get("other")).isNull();
    } finally {
      stale.close();
    }
  }

  @Test
  void resetGoesToTheInstanceOfTheKey() {
    assertThat(client.acquire("once", "k").allowed()).isTrue();
    assertThat(client.acquire("once", "k").allowed()).isFalse();
    client.reset("once", "k").toCompletableFuture().join();
    assertThat(client.acquire("once", "k").allowed()).isTrue();
  }
}
