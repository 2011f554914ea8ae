package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The sub-cases of envoyproxy/ratelimit's TestShareThreshold (config suite) on its
 * {@code share_threshold.yaml}, unchanged. Upstream asserts that the matching values get one
 * stats key; what a client sees of that is one counter, so each case counts down one limit from
 * several values, and checks that a value outside the pattern matches nothing.
 */
class EnvoyUpstreamShareThresholdTest {
  private static final Path FILE = Path.of("src/test/resources/envoy/upstream/config/share_threshold.yaml");
  private static final String DOMAIN = "test-domain";

  /** Calls once per descriptor and checks that each call took one more from the same limit. */
  private static void oneCounter(EnvoyHarness h, int limit, RateLimitDescriptor... ds) {
    for (int i = 0; i < ds.length; i++) {
      DescriptorStatus s = h.call(DOMAIN, ds[i]).getStatuses(0);
      assertThat(s.getCurrentLimit().getRequestsPerUnit()).as("descriptor %d", i).isEqualTo(limit);
      assertThat(s.getCurrentLimit().getUnit()).isEqualTo(Unit.MINUTE);
      assertThat(s.getLimitRemaining()).as("descriptor %d", i).isEqualTo(limit - (i + 1));
    }
  }

  private static boolean limited(EnvoyHarness h, RateLimitDescriptor d) {
    return h.call(DOMAIN, d).getStatuses(0).hasCurrentLimit();
  }

  /** "share_threshold with middle wildcard", and its "priority over value_to_metric" case. */
  @Test
  void middleWildcardValuesShareOneCounter() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(FILE)) {
      oneCounter(h, 100, d("midpath", "/api/v1"), d("midpath", "/api-beta-v1"), d("midpath", "/apiXYZv1"));
      assertThat(limited(h, d("midpath", "/api/v2"))).isFalse();
      oneCounter(h, 80, d("midroute", "/api/v2"), d("midroute", "/api-beta-v2"));
    }
  }

  /** "share_threshold with multi-wildcard". */
  @Test
  void multiWildcardValuesShareOneCounter() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(FILE)) {
      oneCounter(h, 50, d("multiroute", "svcAepBrpc"), d("multiroute", "svcXXXepYYYrpc"),
          d("multiroute", "svceprpc"));
      assertThat(limited(h, d("multiroute", "svcABCrpc"))).isFalse();
    }
  }

  /** "Nested wildcards": a shared wildcard under an exact value, and under another shared one. */
  @Test
  void nestedSharedWildcardsShareOneCounter() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(FILE)) {
      oneCounter(h, 200, d("nested", "parent", "files", "nested/file1.txt"),
          d("nested", "parent", "files", "nested/file2.txt"));
      oneCounter(h, 300, d("files", "top/file1.txt", "files", "nested/file1.txt"),
          d("files", "top/a", "files", "nested/b"));
      oneCounter(h, 150, d("user", "user/alice", "resource", "res/file1", "action", "read"),
          d("user", "user/bob", "resource", "res/file2", "action", "read"));
    }
  }

  /**
   * "share_threshold with metrics": value_to_metric and detailed_metric beside share_threshold
   * only name upstream's stats; the shared counter is the same. The child keys have no value,
   * so their value stays part of the counter: the same one in both calls.
   */
  @Test
  void metricFieldsBesideAShareThresholdKeepOneCounter() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(FILE)) {
      oneCounter(h, 60, d("route", "api/v1", "method", "GET"), d("route", "api/v2", "method", "GET"));
      oneCounter(h, 80, d("service", "svc/user", "endpoint", "get"), d("service", "svc/order", "endpoint", "get"));
    }
  }
}
