package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static dev.sluice.server.envoy.EnvoyUpstreamWildcardTest.limitOf;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's TestValueToMetric_* configurations and requests. Upstream asserts the
 * statsd key {@code value_to_metric} shapes, which Sluice does not have (docs/service.md,
 * "Metrics"); what a client sees is the limit each request matches, and that the field changes it
 * not.
 */
class EnvoyUpstreamValueToMetricTest {
  private static final String ROUTE = """
      domain: d
      descriptors:
        - key: route
          value_to_metric: true
          descriptors:
            - key: http_method
              value_to_metric: true
              detailed_metric: %s
              descriptors:
                - key: subject_id
                  rate_limit: {unit: minute, requests_per_unit: 60}
      """;

  /** UsesRuntimeValuesInStats, DoesNotOverrideDetailedMetric, FullKeyMatchesStatsKey, WithEmptyValue. */
  @Test
  void keysWithoutValuesMatchAnyValueTheEmptyOneToo() throws Exception {
    for (String detailed : new String[] {"false", "true"}) {
      try (EnvoyHarness h = EnvoyHarness.yaml(ROUTE.formatted(detailed))) {
        assertThat(limitOf(h, "d", d("route", "draw", "http_method", "GET", "subject_id", "123"))).isEqualTo(60);
        assertThat(limitOf(h, "d", d("route", "api", "http_method", "GET", "subject_id", "user123"))).isEqualTo(60);
        assertThat(limitOf(h, "d", d("route", "", "http_method", "GET", "subject_id", "123"))).isEqualTo(60);
        assertThat(limitOf(h, "d", d("route", "draw", "http_method", "", "subject_id", "123"))).isEqualTo(60);
        assertThat(limitOf(h, "d", d("route", "", "http_method", "", "subject_id", "123"))).isEqualTo(60);
      }
    }
  }

  /** DefaultKeyIncludesValueAtThatLevel, MidLevelOnly, NoFlag_Unchanged. */
  @Test
  void theFieldAtAnyLevelLeavesTheMatchAsItIs() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: k1
            value_to_metric: true
            descriptors:
              - key: k2
                rate_limit: {unit: second, requests_per_unit: 1}
          - key: m1
            descriptors:
              - key: m2
                value_to_metric: true
                descriptors:
                  - key: m3
                    rate_limit: {unit: second, requests_per_unit: 2}
          - key: n1
            descriptors:
              - key: n2
                rate_limit: {unit: second, requests_per_unit: 3}
        """)) {
      assertThat(limitOf(h, "d", d("k1", "A", "k2", "foo"))).isEqualTo(1);
      assertThat(limitOf(h, "d", d("m1", "X", "m2", "Y", "m3", "Z"))).isEqualTo(2);
      assertThat(limitOf(h, "d", d("n1", "X", "n2", "Y"))).isEqualTo(3);
    }
  }

  /** WithConfiguredValues and WithWildcard. */
  @Test
  void configuredAndWildcardValuesBesideTheFieldMatchAsWithout() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: route
            value_to_metric: true
            descriptors:
              - key: http_method
                value: GET
                value_to_metric: true
                descriptors:
                  - key: subject_id
                    rate_limit: {unit: minute, requests_per_unit: 60}
              - key: http_method
                value: POST
                value_to_metric: true
                descriptors:
                  - key: subject_id
                    rate_limit: {unit: minute, requests_per_unit: 30}
          - key: user
            value_to_metric: true
            descriptors:
              - key: action
                value: read*
                value_to_metric: true
                descriptors:
                  - key: resource
                    rate_limit: {unit: minute, requests_per_unit: 100}
        """)) {
      assertThat(limitOf(h, "d", d("route", "api", "http_method", "GET", "subject_id", "user123"))).isEqualTo(60);
      assertThat(limitOf(h, "d", d("route", "api", "http_method", "POST", "subject_id", "user456"))).isEqualTo(30);
      assertThat(limitOf(h, "d", d("user", "alice", "action", "readfile", "resource", "documents"))).isEqualTo(100);
      assertThat(limitOf(h, "d", d("user", "bob", "action", "readdata", "resource", "database"))).isEqualTo(100);
      assertThat(limitOf(h, "d", d("user", "bob", "action", "write", "resource", "database"))).isEqualTo(-1);
    }
  }
}
