package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The request sequences of envoyproxy/ratelimit's integration test (on its runtime directory,
 * the files unchanged) and of its service tests, with the answers they expect, compared whole:
 * codes, limits, remaining, durations and nothing else (no headers, no metadata).
 */
class EnvoyUpstreamSequencesTest {
  static final Path UPSTREAM_RUNTIME = Path.of("src/test/resources/envoy/upstream/integration");

  private static DescriptorStatus status(Code code, int perUnit, Unit unit, int remaining, long resetSeconds) {
    return DescriptorStatus.newBuilder().setCode(code).setLimitRemaining(remaining)
        .setCurrentLimit(RateLimitResponse.RateLimit.newBuilder().setRequestsPerUnit(perUnit).setUnit(unit))
        .setDurationUntilReset(Duration.newBuilder().setSeconds(resetSeconds)).build();
  }

  private static RateLimitResponse response(Code overall, DescriptorStatus... statuses) {
    RateLimitResponse.Builder b = RateLimitResponse.newBuilder().setOverallCode(overall);
    for (DescriptorStatus s : statuses) {
      b.addStatuses(s);
    }
    return b.build();
  }

  /** Upstream's testBasicBaseConfig, on a fake clock 20 s into a minute (and 1.25 s into a second). */
  @Test
  void basicBaseConfigSequence() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_RUNTIME)) {
      h.advanceMillis(20_250);
      assertThat(h.call("foo", d("hello", "world"))).isEqualTo(response(Code.OK,
          DescriptorStatus.newBuilder().setCode(Code.OK).build()));
      // 0.75 s left of the second: whole seconds, rounded up.
      assertThat(h.call("basic", d("key1", "foo")))
          .isEqualTo(response(Code.OK, status(Code.OK, 50, Unit.SECOND, 49, 1)));

      for (int i = 0; i < 25; i++) {
        boolean over = i >= 20;
        assertThat(h.call("another", d("key2", "714")))
            .as("call %d", i)
            .isEqualTo(response(over ? Code.OVER_LIMIT : Code.OK,
                status(over ? Code.OVER_LIMIT : Code.OK, 20, Unit.MINUTE, over ? 0 : 20 - (i + 1), 40)));
      }

      // Two keys of one domain. From the 11th call key3 is over its limit; key2 is not counted
      // then (one transaction per request), as upstream with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT.
      for (int i = 0; i < 15; i++) {
        boolean over = i >= 10;
        assertThat(h.call("another", d("key2", "715"), d("key3", "715")))
            .as("call %d", i)
            .isEqualTo(response(over ? Code.OVER_LIMIT : Code.OK,
                status(Code.OK, 20, Unit.MINUTE, over ? 10 : 20 - (i + 1), 40),
                status(over ? Code.OVER_LIMIT : Code.OK, 10, Unit.HOUR, over ? 0 : 10 - (i + 1), 3600 - 20)));
      }

      long first = h.call("another", d("key4", "durTest")).getStatuses(0).getDurationUntilReset().getSeconds();
      h.advanceMillis(2_000);
      long second = h.call("another", d("key4", "durTest")).getStatuses(0).getDurationUntilReset().getSeconds();
      assertThat(second).isLessThan(first).isEqualTo(first - 2);
    }
  }

  /** Upstream's testShareThreshold. */
  @Test
  void shareThresholdSequence() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_RUNTIME)) {
      String dom = "share-threshold-test";
      for (int i = 0; i < 10; i++) {
        assertThat(h.call(dom, d("files", "files/a.pdf")).getOverallCode()).isEqualTo(Code.OK);
      }
      assertThat(h.call(dom, d("files", "files/b.csv")))
          .isEqualTo(response(Code.OVER_LIMIT, status(Code.OVER_LIMIT, 10, Unit.HOUR, 0, 3600)));
      for (int i = 0; i < 10; i++) {
        assertThat(h.call(dom, d("files_no_share", "files_no_share/" + i)))
            .isEqualTo(response(Code.OK, status(Code.OK, 10, Unit.HOUR, 9, 3600)));
      }
    }
  }

  /** A window's last second is 1, its first the whole period; 40.052 s is 41. */
  @Test
  void durationUntilResetIsWholeSecondsRoundedUp() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_RUNTIME)) {
      assertThat(h.call("basic", d("one_per_minute", "a")).getStatuses(0).getDurationUntilReset())
          .isEqualTo(Duration.newBuilder().setSeconds(60).build());
      h.advanceMillis(19_948);
      assertThat(h.call("basic", d("one_per_minute", "b")).getStatuses(0).getDurationUntilReset())
          .isEqualTo(Duration.newBuilder().setSeconds(41).build());
      h.advanceMillis(39_552);
      RateLimitResponse last = h.call("basic", d("one_per_minute", "b"));
      assertThat(last.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(last.getStatuses(0).getDurationUntilReset()).isEqualTo(Duration.newBuilder().setSeconds(1).build());
    }
  }

  @Test
  void overTheLimitLeavesNothingAndAPeekStillReportsTheWindow() throws Exception {
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_RUNTIME)) {
      h.advanceMillis(10_300);
      // A cost of 2 with 1 left: over, and nothing remaining, as Envoy's service says it.
      h.callTimes(19, "another", d("key2", "x"));
      RateLimitRequest two = RateLimitRequest.newBuilder().setDomain("another").setHitsAddend(2)
          .addDescriptors(d("key2", "x")).build();
      assertThat(h.call(two)).isEqualTo(response(Code.OVER_LIMIT, status(Code.OVER_LIMIT, 20, Unit.MINUTE, 0, 50)));
      // hits_addend 0 on a descriptor never counted: the window still ends with the minute.
      RateLimitRequest peek = RateLimitRequest.newBuilder().setDomain("another")
          .addDescriptors(d("key2", "fresh").toBuilder().setHitsAddend(UInt64Value.of(0))).build();
      assertThat(h.call(peek)).isEqualTo(response(Code.OK, status(Code.OK, 20, Unit.MINUTE, 20, 50)));
    }
  }

  /** Upstream's TestServiceGlobalShadowMode and TestServiceWithDefaultRatelimitHeaders. */
  @Test
  void globalShadowModeAndResponseHeadersAsUpstreamsServiceTests() throws Exception {
    EnvoyOptions options = EnvoyOptions.DEFAULT.withShadowMode(true).withResponseHeaders(true);
    try (EnvoyHarness h = EnvoyHarness.load(UPSTREAM_RUNTIME, options)) {
      h.advanceMillis(2_000);
      h.call("basic", d("one_per_minute", "s"));
      RateLimitResponse r = h.call("basic", d("one_per_minute", "s"), d("hello", "world"));
      assertThat(r).isEqualTo(response(Code.OK, status(Code.OVER_LIMIT, 1, Unit.MINUTE, 0, 58),
          DescriptorStatus.newBuilder().setCode(Code.OK).build()).toBuilder()
          .addResponseHeadersToAdd(HeaderValue.newBuilder().setKey("RateLimit-Limit").setValue("1"))
          .addResponseHeadersToAdd(HeaderValue.newBuilder().setKey("RateLimit-Remaining").setValue("0"))
          .addResponseHeadersToAdd(HeaderValue.newBuilder().setKey("RateLimit-Reset").setValue("58"))
          .build());
    }
  }
}
