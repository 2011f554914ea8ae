package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The configuration examples of Envoy's rate limit service documentation (its README, examples
 * 1 to 9), loaded unchanged from one directory, answer as that documentation says.
 */
class EnvoyReadmeExamplesTest {
  private EnvoyHarness h;

  @BeforeEach
  void load() throws Exception {
    h = EnvoyHarness.load(EnvoyHarness.readmeExamples());
  }

  @AfterEach
  void close() {
    h.close();
  }

  private static void assertLimit(DescriptorStatus s, Code code, int perUnit, Unit unit, long remaining) {
    assertThat(s.getCode()).isEqualTo(code);
    assertThat(s.getCurrentLimit().getRequestsPerUnit()).isEqualTo(perUnit);
    assertThat(s.getCurrentLimit().getUnit()).isEqualTo(unit);
    assertThat(Integer.toUnsignedLong(s.getLimitRemaining())).isEqualTo(remaining);
  }

  @Test
  void allExamplesLoadAsOneDirectoryOfDomains() {
    assertThat(h.config.domains().keySet()).containsExactlyInAnyOrder("mongo_cps", "messaging",
        "edge_proxy_per_ip", "example4", "internal", "example6", "example7", "example8", "example9");
    assertThat(h.config.sources()).allSatisfy(s -> assertThat(s.format()).isEqualTo("envoy"));
  }

  @Test
  void example1EachDatabaseGets500RequestsPerSecond() {
    RateLimitResponse r = h.call("mongo_cps", d("database", "users"));
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertLimit(r.getStatuses(0), Code.OK, 500, Unit.SECOND, 499);

    r = h.callTimes(499, "mongo_cps", d("database", "users"));
    assertLimit(r.getStatuses(0), Code.OK, 500, Unit.SECOND, 0);
    r = h.call("mongo_cps", d("database", "users"));
    assertThat(r.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertLimit(r.getStatuses(0), Code.OVER_LIMIT, 500, Unit.SECOND, 0);
    assertThat(r.getStatuses(0).getDurationUntilReset().getSeconds()).isEqualTo(1);

    // The other database has its own limit.
    assertLimit(h.call("mongo_cps", d("database", "default")).getStatuses(0), Code.OK, 500, Unit.SECOND, 499);
    // An unlisted database is not limited at all.
    RateLimitResponse other = h.call("mongo_cps", d("database", "orders"));
    assertThat(other.getOverallCode()).isEqualTo(Code.OK);
    assertThat(other.getStatuses(0).hasCurrentLimit()).isFalse();

    h.ticker.advance(Duration.ofSeconds(1));
    assertLimit(h.call("mongo_cps", d("database", "users")).getStatuses(0), Code.OK, 500, Unit.SECOND, 499);
  }

  @Test
  void example2MarketingMessagesGetFivePerDayForEachNumber() {
    for (int i = 0; i < 5; i++) {
      assertThat(h.call("messaging", d("message_type", "marketing", "to_number", "2061111111")).getOverallCode())
          .isEqualTo(Code.OK);
    }
    RateLimitResponse sixth = h.call("messaging", d("message_type", "marketing", "to_number", "2061111111"));
    assertLimit(sixth.getStatuses(0), Code.OVER_LIMIT, 5, Unit.DAY, 0);
    // Each number gets its own five.
    assertLimit(h.call("messaging", d("message_type", "marketing", "to_number", "2062222222")).getStatuses(0),
        Code.OK, 5, Unit.DAY, 4);
    // Any number gets 100 messages a day.
    assertLimit(h.call("messaging", d("to_number", "2061111111")).getStatuses(0), Code.OK, 100, Unit.DAY, 99);
    // A marketing message type without a number matches nothing: the limit is one level down.
    assertThat(h.call("messaging", d("message_type", "marketing")).getStatuses(0).hasCurrentLimit()).isFalse();
    h.ticker.advance(Duration.ofDays(1));
    assertThat(h.call("messaging", d("message_type", "marketing", "to_number", "2061111111")).getOverallCode())
        .isEqualTo(Code.OK);
  }

  @Test
  void example2BothDescriptorsInOneCallAreLimitedTogether() {
    RateLimitResponse r = h.call("messaging", d("message_type", "marketing", "to_number", "2061111111"),
        d("to_number", "2061111111"));
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertLimit(r.getStatuses(0), Code.OK, 5, Unit.DAY, 4);
    assertLimit(r.getStatuses(1), Code.OK, 100, Unit.DAY, 99);
    h.callTimes(4, "messaging", d("message_type", "marketing", "to_number", "2061111111"),
        d("to_number", "2061111111"));
    RateLimitResponse denied = h.call("messaging", d("message_type", "marketing", "to_number", "2061111111"),
        d("to_number", "2061111111"));
    assertThat(denied.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(denied.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    // Unlike Envoy's own service, the denied request took nothing from the per-number limit.
    assertLimit(denied.getStatuses(1), Code.OK, 100, Unit.DAY, 95);
  }

  @Test
  void example3KeyAndValueMatchBeforeKeyAloneAndZeroBlocksEverything() {
    RateLimitResponse blocked = h.call("edge_proxy_per_ip", d("remote_address", "50.0.0.5"));
    assertThat(blocked.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertLimit(blocked.getStatuses(0), Code.OVER_LIMIT, 0, Unit.SECOND, 0);

    RateLimitResponse r = h.callTimes(10, "edge_proxy_per_ip", d("remote_address", "50.0.0.1"));
    assertLimit(r.getStatuses(0), Code.OK, 10, Unit.SECOND, 0);
    assertThat(h.call("edge_proxy_per_ip", d("remote_address", "50.0.0.1")).getOverallCode())
        .isEqualTo(Code.OVER_LIMIT);
    assertLimit(h.call("edge_proxy_per_ip", d("remote_address", "50.0.0.2")).getStatuses(0), Code.OK, 10,
        Unit.SECOND, 9);
  }

  @Test
  void example4ALimitAppliesOnlyAtItsOwnDepth() {
    assertThat(h.call("example4", d("key", "value")).getStatuses(0).hasCurrentLimit()).isFalse();
    assertLimit(h.call("example4", d("key", "value", "subkey", "subvalue")).getStatuses(0), Code.OK, 300,
        Unit.SECOND, 299);
    assertThat(h.call("example4", d("key", "value", "subkey", "subvalue", "deeper", "x")).getStatuses(0)
        .hasCurrentLimit()).isFalse();
  }

  @Test
  void example5UnlimitedIsAlwaysOkWithMaxUint32Remaining() {
    RateLimitResponse r = h.callTimes(1000, "internal", d("ldap", "anything"));
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertThat(r.getStatuses(0).getCode()).isEqualTo(Code.OK);
    assertThat(Integer.toUnsignedLong(r.getStatuses(0).getLimitRemaining())).isEqualTo(4_294_967_295L);
    assertLimit(h.call("internal", d("azure", "x")).getStatuses(0), Code.OK, 100, Unit.MINUTE, 99);
  }

  @Test
  void example6ShadowModeReportsButNeverLimits() {
    RateLimitResponse r = h.callTimes(15, "example6", d("service", "auth-service", "user", "user-a"));
    assertThat(r.getOverallCode()).isEqualTo(Code.OK);
    assertThat(r.getStatuses(0).getCode()).isEqualTo(Code.OK);
    assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(10);
    assertThat(r.getStatuses(0).getLimitRemaining()).isZero();

    RateLimitResponse b = h.callTimes(20, "example6", d("service", "auth-service", "user", "user-b"));
    assertThat(b.getOverallCode()).isEqualTo(Code.OK);
    assertThat(h.call("example6", d("service", "auth-service", "user", "user-b")).getOverallCode())
        .isEqualTo(Code.OVER_LIMIT);
  }

  @Test
  void example7AReplacingLimitDropsTheReplacedOne() {
    // (key_1, value_1), (user, bkthomps): 5 / sec alone.
    assertLimit(h.call("example7", d("key_1", "value_1", "user", "bkthomps")).getStatuses(0), Code.OK, 5,
        Unit.SECOND, 4);
    // (key_2, value_2), (user, bkthomps): 10 / sec.
    assertLimit(h.call("example7", d("key_2", "value_2", "user", "bkthomps")).getStatuses(0), Code.OK, 10,
        Unit.SECOND, 9);
    // Both: only the replacing 10 / sec applies, and the 5 / sec limit is left untouched.
    RateLimitResponse both = h.callTimes(8, "example7", d("key_1", "value_1", "user", "bkthomps"),
        d("key_2", "value_2", "user", "bkthomps"));
    assertThat(both.getOverallCode()).isEqualTo(Code.OK);
    assertThat(both.getStatuses(0).hasCurrentLimit()).isFalse();
    assertLimit(both.getStatuses(1), Code.OK, 10, Unit.SECOND, 1);
    assertLimit(h.call("example7", d("key_1", "value_1", "user", "bkthomps")).getStatuses(0), Code.OK, 5,
        Unit.SECOND, 3);
  }

  @Test
  void example8UnspecifiedValuesEachGetTheirOwnCounter() {
    assertLimit(h.callTimes(10, "example8", d("key1", "unspecified_value")).getStatuses(0), Code.OK, 10,
        Unit.MINUTE, 0);
    assertThat(h.call("example8", d("key1", "unspecified_value")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertLimit(h.call("example8", d("key1", "unspecified_value2")).getStatuses(0), Code.OK, 10, Unit.MINUTE, 9);
    assertLimit(h.call("example8", d("key1", "value1")).getStatuses(0), Code.OK, 20, Unit.MINUTE, 19);
  }

  @Test
  void example9WildcardValuesMatchByPrefixWithACounterPerValue() {
    assertLimit(h.callTimes(20, "example9", d("key1", "value_1")).getStatuses(0), Code.OK, 20, Unit.MINUTE, 0);
    assertThat(h.call("example9", d("key1", "value_1")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertLimit(h.call("example9", d("key1", "value_2")).getStatuses(0), Code.OK, 20, Unit.MINUTE, 19);
    assertThat(h.call("example9", d("key1", "other")).getStatuses(0).hasCurrentLimit()).isFalse();
  }
}
