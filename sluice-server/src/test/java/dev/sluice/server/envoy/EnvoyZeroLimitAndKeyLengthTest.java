package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.grpc.Status;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** SPEC §6 (Envoy's own rules: a limit of zero) and §2 (keys) for Envoy descriptors. */
class EnvoyZeroLimitAndKeyLengthTest {

  @Test
  void aLimitWithoutRequestsPerUnitBlocksEveryRequestAtEveryTime() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: zero
            rate_limit: {unit: minute, requests_per_unit: 0}
          - key: omitted
            rate_limit: {unit: second}
        """)) {
      for (int i = 0; i < 3; i++) {
        for (String key : new String[] {"zero", "omitted"}) {
          RateLimitResponse r = h.call("d", d(key, "v" + i));
          assertThat(r.getOverallCode()).as("%s at step %d", key, i).isEqualTo(Code.OVER_LIMIT);
          assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isZero();
          assertThat(r.getStatuses(0).getLimitRemaining()).isZero();
        }
        h.ticker.advance(Duration.ofHours(1));
      }
    }
  }

  @Test
  void aDescriptorKeyOf512BytesIsCountedAndOneByteMoreIsAnInvalidArgument() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.yaml("""
        domain: d
        descriptors:
          - key: user
            rate_limit: {unit: minute, requests_per_unit: 1}
        """)) {
      // The Sluice key is "user=<value>": 5 bytes and the value.
      String longest = "x".repeat(507);
      assertThat(EnvoyRateLimitService.key(d("user", longest)).length()).isEqualTo(512);
      assertThat(h.call("d", d("user", longest)).getOverallCode()).isEqualTo(Code.OK);
      assertThat(h.call("d", d("user", longest)).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      // A value that differs only past byte 512 is not folded into the same counter.
      Status s = h.callError(RateLimitRequest.newBuilder().setDomain("d").addDescriptors(d("user", longest + "y"))
          .build());
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).contains("key is 513 bytes").contains("the maximum is 512");
    }
  }
}
