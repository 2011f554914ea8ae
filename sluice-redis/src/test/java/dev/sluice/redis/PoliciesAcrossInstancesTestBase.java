package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Attribute;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.policy.ListEntry;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Offender;
import dev.sluice.policy.Page;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Policies shared by two limiters, each with a Redis store (and connection) of its own, on one
 * Redis: what one sets, the other applies within a second; a ban one starts, the other enforces
 * without a store call once it knows it. Each test works under a key prefix of its own.
 */
abstract class PoliciesAcrossInstancesTestBase extends TwoInstancesTestBase {
  final Rule api = Rule.builder("api").window(5, Duration.ofHours(1)).build();
  final Rule login = Rule.builder("login").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofHours(1))
      .ban(new BanPolicy(3, Duration.ofMinutes(1), Duration.ofSeconds(2))).build();
  final Rule perIp = Rule.builder("per_ip").window(1, Duration.ofHours(1))
      .audit(new AuditPolicy(3, "user")).build();
  final RuleSet rules = RuleSet.of(api, login, perIp)
      .withTiers(Map.of("ten", List.of(Window.of(10, Duration.ofHours(1)))))
      .withOperations(List.of(Operation.of("call", OperationItem.of("per_ip", "ip:{ip}"))),
          List.of(Attribute.ip("ip", 24, 64)));

  @Override
  RuleSet rules() {
    return rules;
  }

  static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  /** Milliseconds until {@code done} holds, checking every 10 ms; fails after 10 s. */
  static long millisUntil(BooleanSupplier done) throws InterruptedException {
    long start = System.nanoTime();
    while (!done.getAsBoolean()) {
      assertThat(System.nanoTime() - start).as("waited 10 s").isLessThan(TimeUnit.SECONDS.toNanos(10));
      Thread.sleep(10);
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  static WindowView peek(RateLimiter l, String rule, String key) {
    ItemDecision d = l.acquire(rule, key, 0).items().get(0);
    return new WindowView(d.windows().get(0).limit(), d.windows().get(0).remaining());
  }

  record WindowView(long limit, long remaining) {}

  @Test
  void aLiveLimitSetThroughOneInstanceIsAppliedByTheOtherWithinASecondKeepingWhatWasConsumed() throws Exception {
    for (int i = 0; i < 4; i++) {
      assertThat(b.acquire("api", "user:42").allowed()).isTrue();
    }
    assertThat(peek(b, "api", "user:42")).isEqualTo(new WindowView(5, 1));

    join(a.policies().setLimit("api", "user:42", LiveLimit.tier("ten")));
    long took = millisUntil(() -> peek(b, "api", "user:42").limit() == 10);
    // Applied by the other instance within a second (its poll runs every 250 ms), and nothing
    // consumed was forgotten: 4 of 10 used, 6 left.
    assertThat(took).isLessThan(1_000);
    assertThat(peek(b, "api", "user:42")).isEqualTo(new WindowView(10, 6));
    assertThat(peek(a, "api", "user:42")).isEqualTo(new WindowView(10, 6));

    join(b.policies().removeLimit("api", "user:42"));
    assertThat(millisUntil(() -> peek(a, "api", "user:42").limit() == 5)).isLessThan(1_000);
    assertThat(peek(a, "api", "user:42")).isEqualTo(new WindowView(5, 1));
  }

  @Test
  void aBanStartedByDenialsOnOneInstanceIsEnforcedByTheOtherWithoutAStoreCallAndEndsOnTime() throws Exception {
    assertThat(a.acquire("login", "ip:1").allowed()).isTrue();
    for (int i = 0; i < 3; i++) {
      assertThat(a.acquire("login", "ip:1").items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    }
    // Three denials within a minute: banned for 2 s, on the other instance too.
    ItemDecision first = b.acquire("login", "ip:1").items().get(0);
    assertThat(first.reason()).isEqualTo(DenyReason.BANNED);
    assertThat(first.blockedMs()).isBetween(1L, 2_000L);
    assertThat(b.acquire("login", "ip:1").retryAfterMs()).isBetween(1L, 2_000L);

    // Known there now: a thousand requests on the banned key cost no decision call.
    long before = decisionCalls();
    for (int i = 0; i < 1_000; i++) {
      Decision d = b.acquire("login", "ip:1");
      assertThat(d.allowed()).isFalse();
      assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    }
    assertThat(decisionCalls()).isEqualTo(before);
    // Recorded for listings too, by a write that does not hold up the decision that learned it.
    assertThat(millisUntil(() -> join(b.policies().ban("login", "ip:1")).isPresent())).isLessThan(1_000);
    assertThat(join(b.policies().ban("login", "ip:1"))).hasValueSatisfying(ban -> assertThat(ban.automatic()).isTrue());

    // It ends on time on both: afterwards the key is limited by its window again (still used up).
    Thread.sleep(first.blockedMs() + 50);
    assertThat(b.acquire("login", "ip:1").items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(a.acquire("login", "ip:1").items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
  }

  @Test
  void aManualBanAndItsLiftingReachTheOtherInstanceWithinASecond() throws Exception {
    // Watched with peeks (cost 0): a request admitted before the ban arrives must not use up the key.
    join(a.policies().ban("api", "user:7", java.time.Instant.now().plusSeconds(60)));
    assertThat(millisUntil(() -> b.acquire("api", "user:7", 0).items().get(0).reason() == DenyReason.BANNED))
        .isLessThan(1_000);
    join(a.policies().unban("api", "user:7"));
    assertThat(millisUntil(() -> b.acquire("api", "user:7", 0).allowed())).isLessThan(1_000);
    assertThat(b.acquire("api", "user:7").allowed()).isTrue();
  }

  @Test
  void listsMatchCidrRangesForIpv4AndIpv6AndAnAllowedKeyIsNeverDenied() throws Exception {
    join(a.policies().addToList(ListKind.ALLOW, "per_ip", "ip:10.0.0.0/8"));
    join(a.policies().addToList(ListKind.DENY, "per_ip", "ip:203.0.113.0/24"));
    join(a.policies().addToList(ListKind.DENY, "per_ip", "ip:2001:db8::/32"));
    // The other instance reads changes in order: once it has the last, it has them all.
    assertThat(millisUntil(() -> b.acquire("per_ip", "ip:2001:db8:1::5").items().get(0).reason()
        == DenyReason.DENY_LISTED)).isLessThan(1_000);
    assertThat(b.acquire("per_ip", "ip:203.0.113.9").items().get(0).reason()).isEqualTo(DenyReason.DENY_LISTED);
    assertThat(b.acquire("per_ip", "ip:2001:db9::5").allowed()).isTrue();
    assertThat(b.acquire("per_ip", "ip:203.0.114.9").allowed()).isTrue();
    for (int i = 0; i < 20; i++) {
      assertThat(b.acquire("per_ip", "ip:10.1.2.3").allowed()).isTrue();
    }
    assertThat(b.acquire("per_ip", "ip:11.1.2.3").allowed()).isTrue();
    assertThat(b.acquire("per_ip", "ip:11.1.2.3").allowed()).isFalse();
  }

  @Test
  void everyRulesRunTimeEntriesAreListedByRuleThenEntryFromEitherInstance() {
    join(a.policies().addToList(ListKind.DENY, "per_ip", "ip:203.0.113.0/24"));
    join(a.policies().addToList(ListKind.DENY, "per_ip", "ip:2001:db8::/32"));
    join(a.policies().addToList(ListKind.DENY, "api", "tenant:9"));
    join(a.policies().addToList(ListKind.ALLOW, "per_ip", "ip:10.0.0.0/8"));
    assertThat(join(b.policies().lists(ListKind.DENY, null, 10))).isEqualTo(new Page<>(List.of(
        new ListEntry("api", "tenant:9"), new ListEntry("per_ip", "ip:2001:db8::/32"),
        new ListEntry("per_ip", "ip:203.0.113.0/24")), null));
    Page<ListEntry> first = join(b.policies().lists(ListKind.DENY, null, 2));
    assertThat(first.items()).hasSize(2);
    assertThat(join(b.policies().lists(ListKind.DENY, first.next(), 2)).items())
        .containsExactly(new ListEntry("per_ip", "ip:203.0.113.0/24"));
    assertThat(join(b.policies().lists(ListKind.ALLOW, null, 10)).items())
        .containsExactly(new ListEntry("per_ip", "ip:10.0.0.0/8"));
  }

  @Test
  void auditKeepsTheLastDistinctValuesWrittenInTheDecisionsCall() throws Exception {
    join(a.policies().setLimit("per_ip", "ip:198.51.100.0/24", LiveLimit.windows(List.of(Window.of(100,
        Duration.ofHours(1))))));
    assertThat(millisUntil(() -> peek(b, "per_ip", "ip:198.51.100.0/24").limit() == 100)).isLessThan(1_000);
    for (String user : List.of("u1", "u2", "u3", "u2", "u4", "u5", "u4")) {
      RateLimiter via = user.hashCode() % 2 == 0 ? a : b;
      Decision d = via.acquire(Request.operation("call").attribute("ip", "198.51.100.7").attribute("user", user)
          .build());
      assertThat(d.allowed()).as(user).isTrue();
    }
    assertThat(join(b.policies().audit("per_ip", "ip:198.51.100.0/24"))).containsExactly("u4", "u5", "u2");
  }

  @Test
  void topOffendersCountEveryInstancesDenials() {
    // user:i is tried i + 5 times, alternating instances: the first 5 are admitted (5 an hour),
    // then i denials.
    for (int i = 0; i < 20; i++) {
      for (int t = 0; t < i + 5; t++) {
        (t % 2 == 0 ? a : b).acquire("api", "user:" + i);
      }
    }
    // Each instance flushes its own denials before it answers: b's answer has all of b's and what
    // a had handed over; a's, asked after, has every denial. 20 keys fit the sketch: no error.
    List<Offender> fromB = join(b.policies().top("api", Duration.ofMinutes(5), 3));
    for (Offender o : fromB) {
      assertThat(o.denials()).isBetween(1L, Long.parseLong(o.key().substring(5)));
    }
    assertThat(join(a.policies().top("api", Duration.ofMinutes(5), 3))).containsExactly(
        new Offender("user:19", 19, 0), new Offender("user:18", 18, 0), new Offender("user:17", 17, 0));
  }

  @Test
  void topOffendersCountTheBooleanCallsDenialsToo() {
    // user:i: 5 admitted, then i denials, through the calls that build no decision.
    for (int i = 1; i <= 3; i++) {
      for (int t = 0; t < i + 5; t++) {
        if (t % 2 == 0) {
          a.tryAcquire("api", "user:" + i);
        } else {
          join(b.tryAcquireAsync("api", "user:" + i, 1));
        }
      }
    }
    join(b.policies().top("api", Duration.ofMinutes(5), 3));
    assertThat(join(a.policies().top("api", Duration.ofMinutes(5), 3))).containsExactly(
        new Offender("user:3", 3, 0), new Offender("user:2", 2, 0), new Offender("user:1", 1, 0));
  }
}
