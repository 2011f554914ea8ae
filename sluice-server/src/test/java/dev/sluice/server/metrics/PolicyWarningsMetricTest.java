package dev.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BanPolicy;
import dev.sluice.DenyReason;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice_policy_warnings_total{kind}} counts every warning of the policy path, logged or
 * not: here automatic bans whose records the memory store's policy bound refuses.
 */
class PolicyWarningsMetricTest {

  @Test
  void everyAutomaticBanWhoseRecordIsRefusedIsCounted() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FakeTicker ticker = new FakeTicker();
    // 50,000 bytes for policy records: some twenty bans of 512-byte keys.
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxBytes(200_000).build();
    Rule login = Rule.builder("login").window(1, Duration.ofHours(1))
        .ban(new BanPolicy(1, Duration.ofMinutes(1), Duration.ofHours(1))).build();
    try (RateLimiter limiter = Sluice.builder().rules(login).store(store).ticker(ticker).sleeper(ticker)
        .listener(new SluiceMetrics(registry)).build()) {
      int keys = 60;
      for (int i = 0; i < keys; i++) {
        String k = "ip:" + i + ":" + "x".repeat(500);
        limiter.acquire("login", k);
        limiter.acquire("login", k);
        assertThat(limiter.acquire("login", k).items().get(0).reason()).isEqualTo(DenyReason.BANNED);
      }
      int recorded = limiter.policies().bans("login", null, 1000).toCompletableFuture().join().items().size();
      assertThat(recorded).isBetween(10, 40);
      assertThat(registry.get("sluice.policy.warnings").tag("kind", "ban_not_recorded").counter().count())
          .isEqualTo(keys - recorded);
    } finally {
      store.close();
    }
  }
}
