package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class EnvoyRateLimitServiceTest {

  private static Map<String, String> headers(RateLimitResponse r) {
    return r.getResponseHeadersToAddList().stream()
        .collect(Collectors.toMap(HeaderValue::getKey, HeaderValue::getValue));
  }

  @Test
  void exactValueWinsOverWildcardAndWildcardOverKeyAlone() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: paths
        descriptors:
          - key: path
            rate_limit: {unit: minute, requests_per_unit: 1}
          - key: path
            value: "/api/*"
            rate_limit: {unit: minute, requests_per_unit: 2}
          - key: path
            value: "/api/special"
            rate_limit: {unit: minute, requests_per_unit: 3}
        """)) {
      assertThat(h.call("paths", d("path", "/api/special")).getStatuses(0).getCurrentLimit().getRequestsPerUnit())
          .isEqualTo(3);
      assertThat(h.call("paths", d("path", "/api/other")).getStatuses(0).getCurrentLimit().getRequestsPerUnit())
          .isEqualTo(2);
      assertThat(h.call("paths", d("path", "/web")).getStatuses(0).getCurrentLimit().getRequestsPerUnit())
          .isEqualTo(1);
    }
  }

  @Test
  void nestedWildcardsMatchAtTheirOwnLevel() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: tenant
            descriptors:
              - key: path
                value: "/v1/*"
                rate_limit: {unit: second, requests_per_unit: 2}
        """)) {
      assertThat(h.callTimes(2, "d", d("tenant", "acme", "path", "/v1/x")).getOverallCode()).isEqualTo(Code.OK);
      assertThat(h.call("d", d("tenant", "acme", "path", "/v1/x")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      // Another tenant, and another path under the wildcard, count separately.
      assertThat(h.call("d", d("tenant", "other", "path", "/v1/x")).getOverallCode()).isEqualTo(Code.OK);
      assertThat(h.call("d", d("tenant", "acme", "path", "/v1/y")).getOverallCode()).isEqualTo(Code.OK);
      assertThat(h.call("d", d("tenant", "acme", "path", "/v2/x")).getStatuses(0).hasCurrentLimit()).isFalse();
    }
  }

  @Test
  void hitsAddendOfTheRequestAndOfADescriptorAreTheCost() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: a
            rate_limit: {unit: minute, requests_per_unit: 10}
          - key: b
            rate_limit: {unit: minute, requests_per_unit: 10}
        """)) {
      RateLimitDescriptor b = d("b", "1").toBuilder().setHitsAddend(UInt64Value.of(5)).build();
      RateLimitResponse r = h.call(RateLimitRequest.newBuilder().setDomain("d").setHitsAddend(3)
          .addDescriptors(d("a", "1")).addDescriptors(b).build());
      assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(7);
      assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(5);
      // No hits_addend at all counts one hit.
      assertThat(h.call("d", d("a", "1")).getStatuses(0).getLimitRemaining()).isEqualTo(6);
    }
  }

  @Test
  void aDescriptorThatDeniesLeavesTheOthersUntouched() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: ip
            rate_limit: {unit: minute, requests_per_unit: 100}
          - key: user
            rate_limit: {unit: minute, requests_per_unit: 1}
        """)) {
      assertThat(h.call("d", d("ip", "1.2.3.4"), d("user", "42")).getOverallCode()).isEqualTo(Code.OK);
      for (int i = 0; i < 5; i++) {
        RateLimitResponse r = h.call("d", d("ip", "1.2.3.4"), d("user", "42"));
        assertThat(r.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(r.getStatuses(0).getCode()).isEqualTo(Code.OK);
        assertThat(r.getStatuses(1).getCode()).isEqualTo(Code.OVER_LIMIT);
        // All or nothing: the per-IP limit was not consumed by the denied requests.
        assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(99);
      }
    }
  }

  @Test
  void aZeroLimitDeniesTheRequestAndConsumesNothingElsewhere() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: ip
            rate_limit: {unit: minute, requests_per_unit: 100}
          - key: country
            value: nowhere
            rate_limit: {unit: hour, requests_per_unit: 0}
        """)) {
      h.ticker.advance(Duration.ofMinutes(90));
      RateLimitResponse r = h.callTimes(3, "d", d("ip", "1.2.3.4"), d("country", "nowhere"));
      assertThat(r.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(r.getStatuses(1).getCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(r.getStatuses(1).getCurrentLimit().getUnit()).isEqualTo(Unit.HOUR);
      assertThat(r.getStatuses(1).getDurationUntilReset().getSeconds()).isEqualTo(30 * 60);
      assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(100);
      assertThat(r.getResponseHeadersToAddList()).isEmpty();
    }
  }

  @Test
  void aSluiceDescriptorDecidesAllItsWindowsAsOneTransaction() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: auth
        descriptors:
          - key: user
            sluice:
              algorithm: sliding_log
              windows:
                - {limit: 20, period: 60s}
                - {limit: 5, period: 3s}
        """)) {
      RateLimitResponse r = h.callTimes(5, "auth", d("user", "42"));
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      // The status reports the window with the least room left: 5 per 3 s, not a whole unit.
      assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
      assertThat(r.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.UNKNOWN);
      assertThat(r.getStatuses(0).getLimitRemaining()).isZero();
      for (int i = 0; i < 3; i++) {
        RateLimitResponse denied = h.call("auth", d("user", "42"));
        assertThat(denied.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      }
      h.ticker.advance(Duration.ofSeconds(3));
      RateLimitResponse again = h.call("auth", d("user", "42"));
      assertThat(again.getOverallCode()).isEqualTo(Code.OK);
      // The denials took nothing from the minute window: 20 - 5 - 1 left, the least room now.
      assertThat(again.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(20);
      assertThat(again.getStatuses(0).getLimitRemaining()).isEqualTo(14);
    }
  }

  @Test
  void responseHeadersAreOptInAndNameNoRule() throws Exception {
    String yaml = """
        domain: d
        descriptors:
          - key: user
            rate_limit: {unit: minute, requests_per_unit: 2}
          - key: ip
            rate_limit: {unit: hour, requests_per_unit: 10}
        """;
    try (EnvoyHarness h = EnvoyHarness.yaml(yaml)) {
      // As Envoy's service by default: nothing for Envoy to add to the proxied response.
      assertThat(h.call("d", d("user", "42")).getResponseHeadersToAddList()).isEmpty();
      h.ticker.advance(Duration.ofSeconds(15));
      assertThat(h.callTimes(2, "d", d("user", "42")).getResponseHeadersToAddList()).isEmpty();
    }
    try (EnvoyHarness h = EnvoyHarness.yaml(yaml, EnvoyOptions.DEFAULT.withResponseHeaders(true))) {
      // The descriptor closest to its limit: the user's (1 left of 2), not the address's (9 of 10).
      RateLimitResponse ok = h.call("d", d("ip", "10.0.0.1"), d("user", "42"));
      assertThat(headers(ok)).containsExactlyInAnyOrderEntriesOf(Map.of("RateLimit-Limit", "2",
          "RateLimit-Remaining", "1", "RateLimit-Reset", "60"));
      h.ticker.advance(Duration.ofSeconds(15));
      h.call("d", d("user", "42"));
      RateLimitResponse over = h.call("d", d("ip", "10.0.0.1"), d("user", "42"));
      assertThat(headers(over)).containsExactlyInAnyOrderEntriesOf(Map.of("RateLimit-Limit", "2",
          "RateLimit-Remaining", "0", "RateLimit-Reset", "45"));
      assertThat(over.getStatuses(1).getDurationUntilReset().getSeconds()).isEqualTo(45);
    }
  }

  @Test
  void anUnknownDomainLimitsNothing() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("domain: d\n")) {
      RateLimitResponse r = h.call("elsewhere", d("a", "b"), d("c", "d"));
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(r.getStatusesList()).hasSize(2).allSatisfy(s -> assertThat(s.getCode()).isEqualTo(Code.OK));
    }
  }

  @Test
  void anEmptyDomainOrNoDescriptorsIsAnInvalidArgument() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("domain: d\n")) {
      Status s = h.callError(RateLimitRequest.newBuilder().addDescriptors(d("a", "b")).build());
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).contains("domain must not be empty");
      Status t = h.callError(RateLimitRequest.newBuilder().setDomain("d").build());
      assertThat(t.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(t.getDescription()).contains("descriptor list must not be empty");
    }
  }

  @Test
  void aDescriptorTooLongForAKeyIsAnInvalidArgument() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: user
            rate_limit: {unit: minute, requests_per_unit: 2}
        """)) {
      Status s = h.callError(RateLimitRequest.newBuilder().setDomain("d").addDescriptors(d("user", "x".repeat(600)))
          .build());
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).contains("the maximum is 512");
    }
  }

  @Test
  void keysKeepDescriptorsWithSeparatorsInTheirValuesApart() {
    assertThat(EnvoyRateLimitService.key(d("a", "x/b=y"))).isEqualTo("a=x%2Fb%3Dy");
    assertThat(EnvoyRateLimitService.key(d("a", "x", "b", "y"))).isEqualTo("a=x/b=y");
    assertThat(EnvoyRateLimitService.key(d("a", ""))).isEqualTo("a=");
  }
}
