package dev.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.testing.FakeTicker;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The memory store's meters say how full it is, per rule, and which rules were denied room. */
class StoreMetricsTest {
  final Rule export = Rule.builder("reports.export").window(10, Duration.ofDays(1)).build();
  final Rule token = Rule.builder("auth.createToken").window(20, Duration.ofMinutes(1)).build();

  /** Regression: a rule whose new keys got store_full left no trace in the metrics. */
  @Test
  void keysBytesAndStoreFullDenialsAreReportedPerRule() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SluiceMetrics metrics = new SluiceMetrics(registry);
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker()).maxKeys(1000).maxBytes(1 << 20).build();
    metrics.watchStore(store);
    RateLimiter limiter = Sluice.builder().store(store).listener(metrics).build();
    RuleSet rules = RuleSet.of(export, token);
    limiter.updateRules(rules);
    metrics.configLoaded(config(rules));
    for (int i = 0; i < 1000; i++) {
      limiter.acquire("reports.export", "tenant:" + i);
    }
    limiter.acquire("auth.createToken", "ip:1");

    String text = registry.scrape();
    assertThat(text).contains("sluice_store_keys{rule=\"reports.export\"} 750.0")
        .contains("sluice_store_keys{rule=\"auth.createToken\"} 1.0")
        .contains("sluice_store_full_total{rule=\"reports.export\"} 250.0")
        .contains("sluice_store_full_total{rule=\"auth.createToken\"} 0.0")
        .contains("sluice_store_bytes " + (double) store.bytes())
        .contains("sluice_store_max_keys 1000.0")
        .contains("sluice_store_max_bytes " + (double) (1 << 20));
    assertThat(store.bytes()).isPositive();

    RuleSet next = RuleSet.of(token);
    limiter.updateRules(next);
    metrics.onReload(true, config(next), null);
    assertThat(registry.scrape()).doesNotContain("sluice_store_keys{rule=\"reports.export\"}")
        .doesNotContain("sluice_store_full_total{rule=\"reports.export\"}")
        .contains("sluice_store_keys{rule=\"auth.createToken\"} 1.0");
  }

  @Test
  void aRedisOrOtherStoreAddsNoStoreMeters() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SluiceMetrics metrics = new SluiceMetrics(registry);
    metrics.watchStore(null);
    metrics.configLoaded(config(RuleSet.of(export)));
    assertThat(registry.scrape()).doesNotContain("sluice_store_keys").doesNotContain("sluice_store_bytes");
  }

  private static ServiceConfig config(RuleSet rules) {
    return new ServiceConfig(rules, List.of(), Map.of(), Map.of(), List.of());
  }
}
