package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

/**
 * A request's descriptors are bounded, like the items of an HTTP request. Before, a request of
 * 100,000 descriptors (1.5 MB, well under the 10 MiB message limit) was decided as 100,000 items
 * on an event loop for about a second and answered with 100,000 statuses; at the message limit,
 * over a million.
 */
class EnvoyDescriptorBoundTest {
  static final String CONFIG = """
      domain: edge
      descriptors:
        - key: ip
          rate_limit: {unit: hour, requests_per_unit: 1000}
      """;

  private static RateLimitRequest request(int descriptors) {
    RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain("edge");
    for (int i = 0; i < descriptors; i++) {
      b.addDescriptors(EnvoyHarness.d("ip", "10.0.0.1"));
    }
    return b.build();
  }

  @Test
  void aRequestOfMoreDescriptorsThanTheBoundIsAnInvalidArgumentAndConsumesNothing() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml(CONFIG)) {
      Status s = h.callError(request(EnvoyRateLimitService.MAX_DESCRIPTORS + 1));
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).isEqualTo("the request has 101 descriptors; the maximum is 100");
      assertThat(h.call("edge", EnvoyHarness.d("ip", "10.0.0.1")).getStatuses(0).getLimitRemaining())
          .as("nothing consumed").isEqualTo(999);
    }
  }

  @Test
  void aRequestAtTheBoundIsDecided() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml(CONFIG)) {
      assertThat(h.call(request(EnvoyRateLimitService.MAX_DESCRIPTORS)).getStatusesCount()).isEqualTo(100);
      assertThat(h.call("edge", EnvoyHarness.d("ip", "10.0.0.1")).getStatuses(0).getLimitRemaining()).isEqualTo(899);
    }
  }
}
