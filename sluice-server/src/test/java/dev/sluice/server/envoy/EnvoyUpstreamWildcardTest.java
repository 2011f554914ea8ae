package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's wildcard cases (its config test on {@code wildcard.yaml}, the file
 * unchanged), asked of the service: which limit each request descriptor gets.
 */
class EnvoyUpstreamWildcardTest {
  static final Path UPSTREAM_CONFIG = Path.of("src/test/resources/envoy/upstream/config");

  /** The requests_per_unit of the limit the descriptor gets, or -1 for none. */
  static long limitOf(EnvoyHarness h, String domain, RateLimitDescriptor d) {
    RateLimitResponse.DescriptorStatus s = h.call(domain, d).getStatuses(0);
    return s.hasCurrentLimit() ? s.getCurrentLimit().getRequestsPerUnit() : -1;
  }

  @Test
  void wildcardsMatchAsUpstreamDoes() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("wildcard.yaml"))) {
      String dom = "test-domain";
      assertThat(limitOf(h, dom, d("noVal", "foo1"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("wild", "foo1"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("wild", "foo2"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("nestedWild", "val1", "wild", "goo2"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("wild", "bar"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("noWild", "foo1"))).isEqualTo(-1);
      // A * inside a value: prefix, suffix and the text between, the empty text too.
      assertThat(limitOf(h, dom, d("midWild", "barab"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("midWild", "bar123b"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("midWild", "barb"))).isEqualTo(20);
      assertThat(limitOf(h, dom, d("midWild", "bara"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("midWild", "xbarb"))).isEqualTo(-1);
      // Several: each part in order.
      assertThat(limitOf(h, dom, d("multiWild", "foo123bar456baz"))).isEqualTo(10);
      assertThat(limitOf(h, dom, d("multiWild", "foobarbaz"))).isEqualTo(10);
      assertThat(limitOf(h, dom, d("multiWild", "foo123baz"))).isEqualTo(-1);
      assertThat(limitOf(h, dom, d("multiWild", "bar456baz"))).isEqualTo(-1);
    }
  }

  @Test
  void aMiddleWildcardLimitsAndEachValueCountsOnItsOwn() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_CONFIG.resolve("wildcard.yaml"))) {
      String dom = "test-domain";
      RateLimitResponse r = h.callTimes(10, dom, d("multiWild", "foobarbaz"));
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(h.call(dom, d("multiWild", "foobarbaz")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      // Without share_threshold another matching value has its own counter, as upstream's.
      assertThat(h.call(dom, d("multiWild", "foo1bar2baz")).getStatuses(0).getLimitRemaining()).isEqualTo(9);
    }
  }

  @Test
  void exactThenFirstWildcardInFileOrderThenKeyAlone() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: p
        descriptors:
          - key: k
            rate_limit: {unit: minute, requests_per_unit: 1}
          - key: k
            value: "a*z"
            rate_limit: {unit: minute, requests_per_unit: 2}
          - key: k
            value: "ab*"
            rate_limit: {unit: minute, requests_per_unit: 3}
          - key: k
            value: "abz"
            rate_limit: {unit: minute, requests_per_unit: 4}
        """)) {
      assertThat(limitOf(h, "p", d("k", "abz"))).isEqualTo(4);
      assertThat(limitOf(h, "p", d("k", "abcz"))).isEqualTo(2);
      assertThat(limitOf(h, "p", d("k", "abc"))).isEqualTo(3);
      assertThat(limitOf(h, "p", d("k", "other"))).isEqualTo(1);
    }
  }
}
