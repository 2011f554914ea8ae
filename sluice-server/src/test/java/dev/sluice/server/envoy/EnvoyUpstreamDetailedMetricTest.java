package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static dev.sluice.server.envoy.EnvoyUpstreamWildcardTest.limitOf;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's TestDetailedMetric configurations and requests. Upstream asserts each
 * request's statsd key, which Sluice does not have (docs/service.md, "Metrics"); the key names
 * the descriptor that matched, so here each request must get that descriptor's limit, with
 * {@code detailed_metric} on or off alike.
 */
class EnvoyUpstreamDetailedMetricTest {
  private static final String NESTED = """
      domain: nested
      descriptors:
        - key: key-1
          detailed_metric: %s
          rate_limit: {unit: minute, requests_per_unit: 100}
          descriptors:
            - key: key-2
              detailed_metric: %s
              rate_limit: {unit: minute, requests_per_unit: 5}
      """;

  private static final String REALISTIC = """
      domain: nested
      descriptors:
        - key: key_1
          detailed_metric: true
          rate_limit: {unit: minute, requests_per_unit: 500}
        - key: key_1
          value: some-value-for-key-1
          rate_limit: {unit: minute, requests_per_unit: 500}
        - key: key_2
          detailed_metric: true
          rate_limit: {unit: minute, requests_per_unit: 5000}
          descriptors:
            - key: key_3
              detailed_metric: true
            - key: key_3
              value: requested-key3-value
              detailed_metric: true
              rate_limit: {unit: minute, requests_per_unit: 5}
        - key: key_2
          value: specific-id
          detailed_metric: true
          rate_limit: {unit: minute, requests_per_unit: 50000}
          descriptors:
            - key: key_3
              detailed_metric: true
            - key: key_3
              value: requested-key3-value
              detailed_metric: true
              rate_limit: {unit: minute, requests_per_unit: 100}
      """;

  /** The four "nested with no values" cases: the top-level key alone, then fully nested. */
  @Test
  void nestedKeysWithoutValuesMatchAtTheRequestsDepth() throws Exception {
    for (String detailed : new String[] {"true", "false"}) {
      try (EnvoyHarness h = EnvoyHarness.yaml(NESTED.formatted(detailed, detailed))) {
        assertThat(limitOf(h, "nested", d("key-1", "value-1"))).as(detailed).isEqualTo(100);
        assertThat(limitOf(h, "nested", d("key-1", "value-1", "key-2", "value-2"))).as(detailed).isEqualTo(5);
      }
    }
  }

  /** The three "test nested descriptors" cases on upstream's realistic configuration. */
  @Test
  void theRealisticConfigurationMatchesAsUpstreamsStatsKeysSay() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml(REALISTIC)) {
      assertThat(limitOf(h, "nested", d("key_1", "value-for-key-1"))).isEqualTo(500);
      assertThat(limitOf(h, "nested", d("key_2", "key-2-value"))).isEqualTo(5000);
      assertThat(limitOf(h, "nested", d("key_2", "key-2-value", "key_3", "requested-key3-value"))).isEqualTo(5);
      assertThat(limitOf(h, "nested", d("key_2", "specific-id", "key_3", "requested-key3-value"))).isEqualTo(100);
      // key_3 without a value has no limit of its own: nothing applies at that depth.
      assertThat(limitOf(h, "nested", d("key_2", "key-2-value", "key_3", "other"))).isEqualTo(-1);
    }
  }
}
