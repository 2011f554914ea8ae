package dev.sluice.server.rlqs;

import static dev.sluice.server.rlqs.ProxyStream.bucket;
import static dev.sluice.server.rlqs.ProxyStream.usage;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy.BlanketRule;
import io.envoyproxy.envoy.type.v3.TokenBucket;
import io.grpc.Status;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every case of docs/scaling.md §5 "Stream life" and "One budget", through the service as built.
 * Limits: {@code tenant.requests} 12,000 per minute (200/s), {@code small} 1,000 per minute,
 * {@code scarce} 8 per hour; all leased, all {@code sliding_log}, so nothing the tests take leaves
 * the store's windows while they run.
 */
abstract class AbstractRateLimitQuotaServiceTest extends AbstractRlqsTest {

  @Test
  void aBucketsFirstReportGetsATokenBucketCoveredByUnitsTakenFromTheStore() throws Exception {
    ProxyStream p = stream();
    BucketId id = tenant("first");
    BucketAction a = only(p.exchange(usage(id, 0, 40, 1000)), id);
    // Alone on the key: the whole 200/s, as 20 tokens every 100 ms, a bucket of 20, for 2 × 1 s.
    TokenBucket tb = tokenBucket(a);
    assertThat(tb.getMaxTokens()).isEqualTo(20);
    assertThat(tb.getTokensPerFill().getValue()).isEqualTo(20);
    assertThat(millis(tb.getFillInterval())).isEqualTo(100);
    assertThat(ttlMillis(a)).isEqualTo(2000);
    // Taken before it was sent: 20 + 20 × (2 s + 100 ms) ÷ 100 ms = 440 units left the window.
    assertThat(admits(a)).isEqualTo(440);
    assertThat(remaining("tenant.requests", "tenant:first")).isEqualTo(12_000 - 440);
  }

  @Test
  void theSameStrategyIsSentAgainAndToppedUpWhileTheRateHolds() throws Exception {
    ProxyStream p = stream();
    BucketId id = tenant("steady");
    BucketAction first = only(p.exchange(usage(id, 0, 200, 1000)), id);
    advanceMillis(1000);
    BucketAction second = only(p.exchange(usage(id, 150, 50, 1000)), id);
    // Demand 200/s, alone: the same bucket again (Envoy keeps it and extends the TTL).
    assertThat(second.getQuotaAssignmentAction().getRateLimitStrategy())
        .isEqualTo(first.getQuotaAssignmentAction().getRateLimitStrategy());
    assertThat(ttlMillis(second)).isEqualTo(2000);
    // The 150 used came off the grant, which was topped up to the cover again.
    assertThat(remaining("tenant.requests", "tenant:steady")).isEqualTo(12_000 - 440 - 150);
  }

  @Test
  void countsAreUnsignedAndAHugeAllowedCountUsesUpTheGrantRatherThanAddingToIt() throws Exception {
    ProxyStream p = stream();
    BucketId id = tenant("huge");
    only(p.exchange(usage(id, 0, 200, 1000)), id);
    advanceMillis(1000);
    // 2^64 − 1 requests allowed (uint64): all 440 units held are used; the next cover is taken anew.
    BucketAction again = only(p.exchange(usage(id, -1L, 0, 1000)), id);
    assertThat(admits(again)).isEqualTo(440);
    assertThat(remaining("tenant.requests", "tenant:huge")).isEqualTo(12_000 - 2 * 440);
  }

  @Test
  void twoStreamsOnOneBucketShareItsLimitInProportionToTheirDemandAndNeverPassWhatTheStoreGranted()
      throws Exception {
    ProxyStream a = stream();
    ProxyStream b = stream();
    BucketId id = tenant("shared");
    long reportedAllowed = 0;
    BucketAction lastA = only(a.exchange(usage(id, 0, 300, 1000)), id);
    BucketAction lastB = only(b.exchange(usage(id, 0, 100, 1000)), id);
    checkBound("tenant:shared", reportedAllowed, lastA, lastB);
    for (int round = 0; round < 3; round++) {
      advanceMillis(1000);
      // Each proxy admits what its assignment lets through of its demand (300/s and 100/s) and
      // counts the rest as denied.
      long allowedA = Math.min(300, (long) rate(tokenBucket(lastA)));
      long allowedB = Math.min(100, (long) rate(tokenBucket(lastB)));
      lastA = only(a.exchange(usage(id, allowedA, 300 - allowedA, 1000)), id);
      reportedAllowed += allowedA;
      lastB = only(b.exchange(usage(id, allowedB, 100 - allowedB, 1000)), id);
      reportedAllowed += allowedB;
      checkBound("tenant:shared", reportedAllowed, lastA, lastB);
    }
    double ra = rate(tokenBucket(lastA));
    double rb = rate(tokenBucket(lastB));
    assertThat(ra / rb).as("A's rate over B's").isBetween(2.7, 3.3);
    assertThat(ra + rb).as("the rates together").isBetween(190.0, 210.0);
  }

  /**
   * The bound: what the store counts as taken for the key covers everything the proxies reported
   * admitted plus all their active assignments can still admit.
   */
  void checkBound(String key, long reportedAllowed, BucketAction... active) throws Exception {
    long taken = 12_000 - remaining("tenant.requests", key);
    long canAdmit = 0;
    for (BucketAction a : active) {
      canAdmit += admits(a);
    }
    assertThat(taken).as("units taken from the store").isGreaterThanOrEqualTo(reportedAllowed + canAdmit);
  }

  @Test
  void aReconnectStartsANewConsumerAndTheOldStreamsUnitsStayTaken() throws Exception {
    BucketId id = tenant("reconnect");
    ProxyStream first = stream();
    only(first.exchange(usage(id, 0, 10, 1000)), id);
    first.close();
    assertThat(first.end().getCode()).isEqualTo(Status.Code.OK);
    ProxyStream again = stream();
    BucketAction a = only(again.exchange(usage(id, 0, 10, 1000)), id);
    // Alone again (the old stream left): the whole rate, from a new grant.
    assertThat(rate(tokenBucket(a))).isEqualTo(200.0);
    assertThat(remaining("tenant.requests", "tenant:reconnect")).isEqualTo(12_000 - 2 * 440);
  }

  @Test
  void aSilentBucketIsNoLongerCountedThenAbandoned() throws Exception {
    BucketId id = tenant("silent");
    ProxyStream quiet = stream();
    ProxyStream busy = stream();
    only(quiet.exchange(usage(id, 0, 100, 1000)), id);
    only(busy.exchange(usage(id, 0, 100, 1000)), id);
    advanceMillis(1000);
    BucketAction half = only(busy.exchange(usage(id, 50, 50, 1000)), id);
    assertThat(rate(tokenBucket(half))).isEqualTo(100.0);
    // Past the quiet one's TTL (2 s) without a report: once the sweep sees it, it stops drawing on
    // the limit, and the busy one is given the whole rate.
    advanceMillis(1500);
    BucketAction whole = half;
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (rate(tokenBucket(whole)) != 200.0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      whole = only(busy.exchange(usage(id, 0, 100, 1000)), id);
    }
    assertThat(rate(tokenBucket(whole))).isEqualTo(200.0);
    assertThat(quiet.poll()).as("nothing extends a silent bucket's assignment").isNull();
    // Ten TTLs without a report: abandoned.
    advanceMillis(20_000);
    RateLimitQuotaResponse r = quiet.next();
    assertThat(r.getBucketActionCount()).isEqualTo(1);
    assertThat(r.getBucketAction(0).getBucketId()).isEqualTo(id);
    assertThat(r.getBucketAction(0).hasAbandonAction()).isTrue();
  }

  @Test
  void aReportAfterTheTtlGetsAFreshAssignmentFromANewGrant() throws Exception {
    ProxyStream p = stream();
    BucketId id = tenant("expired");
    only(p.exchange(usage(id, 0, 200, 1000)), id);
    advanceMillis(3000);
    BucketAction again = only(p.exchange(usage(id, 0, 0, 3000)), id);
    // The expired assignment's units were dropped, not given back; a new grant covers the new one.
    assertThat(tokenBucket(again).getMaxTokens()).isEqualTo(20);
    assertThat(ttlMillis(again)).isEqualTo(2000);
    assertThat(remaining("tenant.requests", "tenant:expired")).isEqualTo(12_000 - 2 * 440);
  }

  @Test
  void anUnknownDomainEndsTheStreamNotFoundNamingIt() throws Exception {
    ProxyStream p = stream("nowhere");
    p.report(usage(tenant("x"), 1, 0, 1000));
    Status s = p.end();
    assertThat(s.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(s.getDescription()).contains("'nowhere'");
  }

  @Test
  void malformedReportsEndTheStreamInvalidArgument() throws Exception {
    Map<String, BucketQuotaUsage> bad = new LinkedHashMap<>();
    bad.put("no bucket_id", BucketQuotaUsage.newBuilder().setTimeElapsed(Duration.newBuilder().setSeconds(1))
        .build());
    bad.put("an empty bucket map", usage(BucketId.getDefaultInstance(), 1, 0, 1000));
    bad.put("time_elapsed must be above 0", usage(tenant("t"), 1, 0, 0));
    bad.put("time_elapsed must be above 0, was not set", BucketQuotaUsage.newBuilder().setBucketId(tenant("t"))
        .build());
    String[] many = new String[34];
    for (int i = 0; i < 17; i++) {
      many[2 * i] = "k" + i;
      many[2 * i + 1] = "v";
    }
    bad.put("17 pairs; at most 16", usage(bucket(many), 1, 0, 1000));
    bad.put("bytes of names and values; at most 1024", usage(bucket("name", "per_tenant", "tenant", "x".repeat(1100)),
        1, 0, 1000));
    bad.put("empty name or value", usage(bucket("name", ""), 1, 0, 1000));
    for (Map.Entry<String, BucketQuotaUsage> e : bad.entrySet()) {
      ProxyStream p = stream();
      p.report(e.getValue());
      Status s = p.end();
      assertThat(s.getCode()).as(e.getKey()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).as(e.getKey()).contains(e.getKey());
    }
    ProxyStream none = stream();
    none.send(reports("edge").build());
    assertThat(none.end().getDescription()).contains("at least one bucket_quota_usages");
    ProxyStream noDomain = stream("");
    noDomain.report(usage(tenant("t"), 1, 0, 1000));
    Status s = noDomain.end();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).contains("needs a domain");
  }

  @Test
  void anUnmappedBucketGetsTheUnmatchedRuleForAMinuteAndIsCounted() throws Exception {
    double before = unmatchedTotal();
    ProxyStream p = stream();
    BucketId id = bucket("name", "nobody-maps-this");
    BucketAction a = only(p.exchange(usage(id, 3, 0, 1000)), id);
    assertThat(blanket(a)).isEqualTo(BlanketRule.DENY_ALL);
    assertThat(ttlMillis(a)).isEqualTo(60_000);
    // A template naming a value the bucket lacks maps nothing either.
    BucketId partial = bucket("name", "per_tenant");
    assertThat(blanket(only(p.exchange(usage(partial, 1, 0, 1000)), partial))).isEqualTo(BlanketRule.DENY_ALL);
    assertThat(unmatchedTotal()).isEqualTo(before + 2);
  }

  @Test
  void whenTheStoreGrantsLessTheRateDropsToWhatTheGrantCovers() throws Exception {
    // An application used 990 of the 1,000 units of the minute (its limiter may hold a few more
    // on lease).
    acquire("small", "s:low", 990);
    long left = remaining("small", "s:low");
    assertThat(left).isBetween(3L, 10L);
    ProxyStream p = stream();
    BucketId id = bucket("name", "small", "id", "low");
    BucketAction a = only(p.exchange(usage(id, 0, 20, 1000)), id);
    // 1,000 per minute would be 2 tokens every 100 ms, covered by 44 units. What was granted covers
    // one token per longer fill: all of it, and no more.
    TokenBucket tb = tokenBucket(a);
    assertThat(tb.getTokensPerFill().getValue()).isEqualTo(1);
    assertThat(millis(tb.getFillInterval())).isGreaterThan(100);
    assertThat(admits(a)).isBetween(left - 2, left);
    assertThat(remaining("small", "s:low")).isZero();
  }

  @Test
  void whenTheStoreGrantsLessThanOneFillTheBucketIsDeniedForItsTtl() throws Exception {
    BucketId id = bucket("name", "scarce", "id", "1");
    // 8 per hour: each bucket alone would cover 1 token per long fill with 3 units.
    ProxyStream a = stream();
    ProxyStream b = stream();
    ProxyStream c = stream();
    assertThat(admits(only(a.exchange(usage(id, 0, 1, 1000)), id))).isEqualTo(3);
    assertThat(admits(only(b.exchange(usage(id, 0, 1, 1000)), id))).isEqualTo(3);
    BucketAction denied = only(c.exchange(usage(id, 0, 1, 1000)), id);
    assertThat(blanket(denied)).isEqualTo(BlanketRule.DENY_ALL);
    assertThat(ttlMillis(denied)).isEqualTo(2000);
    assertThat(remaining("scarce", "c:1")).isZero();
  }

  @Test
  void aReloadThatUnmapsABucketAbandonsItOnEveryStream() throws Exception {
    BucketId id = bucket("name", "small", "id", "reload");
    ProxyStream a = stream();
    ProxyStream b = stream();
    only(a.exchange(usage(id, 0, 5, 1000)), id);
    only(b.exchange(usage(id, 0, 5, 1000)), id);
    try {
      String unmapped = CONFIG.replace("      - {when: {name: small}, rule: small, key: \"s:{id}\"}\n", "");
      assertThat(unmapped).isNotEqualTo(CONFIG);
      reconfigure(unmapped, 60_000);
      for (ProxyStream p : new ProxyStream[] {a, b}) {
        RateLimitQuotaResponse r = p.next();
        assertThat(r.getBucketAction(0).getBucketId()).isEqualTo(id);
        assertThat(r.getBucketAction(0).hasAbandonAction()).isTrue();
      }
      // From now on the bucket is unmapped.
      assertThat(blanket(only(a.exchange(usage(id, 0, 5, 1000)), id))).isEqualTo(BlanketRule.DENY_ALL);
    } finally {
      reconfigure(CONFIG, 30_000);
    }
  }

  @Test
  void aStreamHoldsAtMostAThousandBucketsLaterOnesGetTheUnmatchedRule() throws Exception {
    double before = unmatchedTotal();
    ProxyStream p = stream();
    BucketQuotaUsage[] usages = new BucketQuotaUsage[1001];
    for (int i = 0; i < usages.length; i++) {
      usages[i] = usage(bucket("name", "small", "id", "many" + i), 0, 1, 1000);
    }
    RateLimitQuotaResponse r = p.exchange(usages);
    assertThat(r.getBucketActionCount()).isEqualTo(1001);
    for (int i = 0; i < 1000; i++) {
      tokenBucket(r.getBucketAction(i));
    }
    assertThat(blanket(r.getBucketAction(1000))).isEqualTo(BlanketRule.DENY_ALL);
    assertThat(unmatchedTotal()).isEqualTo(before + 1);
  }
}
