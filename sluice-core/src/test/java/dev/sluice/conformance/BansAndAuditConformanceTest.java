package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The store's side of bans and audit: denials of requests with an item of a rule that bans count
 * toward its ban, whichever item denied them (none under a ban in force), a banned
 * key is denied {@code banned} with the time left and consumes nothing in its whole request, and
 * consumption records the audited value among the key's last distinct ones. Decided on the
 * store directly, at explicit times ({@link #BASE_MS} + ms).
 */
public abstract class BansAndAuditConformanceTest extends StoreConformance {

  private static final Duration MINUTE = Duration.ofMinutes(1);

  /** Bans {@code key} until {@code untilMicros} (µs since the epoch), as the store's policy store does. */
  protected abstract void ban(Store store, Rule rule, String key, long untilMicros);

  /** Lifts the ban of {@code key} and forgets its counted denials. */
  protected abstract void unban(Store store, Rule rule, String key);

  /** The key's audit list, newest first. */
  protected abstract List<String> audit(Store store, Rule rule, String key);

  protected static long micros(long ms) {
    return (BASE_MS + ms) * 1000;
  }

  protected static List<ItemDecision> decide(Store store, long ms, ResolvedItem... items) {
    return store.decideSync(new Batch(List.of(items), micros(ms)));
  }

  protected static ResolvedItem item(Rule rule, String key) {
    return new ResolvedItem(rule, key, 1, rule.windowsFor(key));
  }

  protected static ResolvedItem item(Rule rule, String key, long cost, String audit) {
    return new ResolvedItem(rule, key, cost, rule.windowsFor(key), audit);
  }

  /** 1 per minute; banned for 10 s after 3 denials within a minute. */
  private Rule banning(Algorithm a) {
    return rule("ban").algorithm(a).window(1, MINUTE).ban(new BanPolicy(3, MINUTE, Duration.ofSeconds(10))).build();
  }

  /** Leaky buckets are left out: they queue such requests (a wait) rather than deny them. */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void theDenialThatReachesAfterStartsABanAndLaterRequestsAreBannedWithTheTimeLeft(Algorithm a) {
    assumeSupported(a);
    Rule r = banning(a);
    Store s = store();
    assertThat(decide(s, 0, item(r, "k")).get(0).allowed()).isTrue();
    for (int t = 1; t <= 3; t++) {
      ItemDecision d = decide(s, t, item(r, "k")).get(0);
      assertThat(d.allowed()).isFalse();
      assertThat(d.reason()).isNotEqualTo(DenyReason.BANNED);
    }
    ItemDecision banned = decide(s, 4, item(r, "k")).get(0);
    assertThat(banned.allowed()).isFalse();
    assertThat(banned.reason()).isEqualTo(DenyReason.BANNED);
    assertThat(banned.windows()).isEmpty();
    assertThat(banned.blockedMs()).isEqualTo(9_999);
    assertThat(banned.retryAfterMs()).isEqualTo(9_999);
    // Another key of the rule is not banned.
    assertThat(decide(s, 4, item(r, "other")).get(0).allowed()).isTrue();
  }

  @Test
  void theTimeLeftIsRoundedUpToAMillisecond() {
    Rule r = rule("ban").window(1, MINUTE).ban(new BanPolicy(1, MINUTE, Duration.ofSeconds(1))).build();
    Store s = store();
    decide(s, 0, item(r, "k"));
    decide(s, 1, item(r, "k"));
    List<ItemDecision> d = s.decideSync(new Batch(List.of(item(r, "k")), micros(1) + 400));
    assertThat(d.get(0).blockedMs()).isEqualTo(1_000);
  }

  @Test
  void aBanEndsOnTimeAndDenialsCountAfreshAfterIt() {
    Rule r = banning(Algorithm.SLIDING_LOG);
    Store s = store();
    decide(s, 0, item(r, "k"));
    decide(s, 1, item(r, "k"));
    decide(s, 2, item(r, "k"));
    decide(s, 3, item(r, "k"));
    assertThat(decide(s, 10_002, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
    ItemDecision after = decide(s, 10_003, item(r, "k")).get(0);
    assertThat(after.reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(after.windows()).hasSize(1);
    decide(s, 10_004, item(r, "k"));
    assertThat(decide(s, 10_005, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 10_006, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
    // Once the window has room and no ban is in force, the key is admitted.
    assertThat(decide(s, 60_000 + 20_006, item(r, "k")).get(0).allowed()).isTrue();
  }

  @Test
  void denialsAreCountedInAWindowOpenedByTheFirstOneCounted() {
    Rule r = rule("ban").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofHours(1))
        .ban(new BanPolicy(3, MINUTE, Duration.ofSeconds(10))).build();
    Store s = store();
    decide(s, 0, item(r, "k"));
    decide(s, 1, item(r, "k"));
    decide(s, 2, item(r, "k"));
    // The count opened at 1 ms ends at 60,001 ms: this denial opens a new count instead of banning.
    assertThat(decide(s, 60_001, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 60_002, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 60_003, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 60_004, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
  }

  @Test
  void aBannedItemDeniesItsWholeRequestAndNothingIsConsumed() {
    Rule r = banning(Algorithm.SLIDING_LOG);
    Rule other = rule("other").window(10, MINUTE).build();
    Store s = store();
    ban(s, r, "k", micros(1_000));
    List<ItemDecision> d = decide(s, 0, item(other, "o"), item(r, "k"));
    assertThat(d.get(1).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(d.get(1).blockedMs()).isEqualTo(1_000);
    assertThat(d.get(0).allowed()).isTrue();
    // Nothing of the other item was consumed.
    assertThat(decide(s, 1, item(other, "o")).get(0).windows().get(0).remaining()).isEqualTo(9);
    // The banned key's state was not touched either: once the ban ends, its whole window is there.
    assertThat(decide(s, 1_000, item(r, "k")).get(0).allowed()).isTrue();
  }

  @Test
  void anOperatorsBanIsEnforcedAndUnbanLiftsItAndForgetsCountedDenials() {
    Rule r = rule("ban").window(1, MINUTE).ban(new BanPolicy(2, MINUTE, Duration.ofSeconds(10))).build();
    Store s = store();
    decide(s, 0, item(r, "k"));
    decide(s, 1, item(r, "k")); // one denial counted
    ban(s, r, "k", micros(5_000));
    assertThat(decide(s, 2, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(decide(s, 2, item(r, "k")).get(0).blockedMs()).isEqualTo(4_998);
    unban(s, r, "k");
    // Not banned, and the denial before the ban no longer counts: one more denial does not ban.
    assertThat(decide(s, 3, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 4, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 5, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
  }

  @Test
  void aShadowRulesBanIsReportedButBlocksNothing() {
    Rule shadow = rule("shadow").window(1, MINUTE).shadow(true)
        .ban(new BanPolicy(1, MINUTE, Duration.ofSeconds(10))).build();
    Rule enforced = rule("enforced").window(10, MINUTE).build();
    Store s = store();
    decide(s, 0, item(shadow, "k"), item(enforced, "e"));
    List<ItemDecision> denied = decide(s, 1, item(shadow, "k"), item(enforced, "e"));
    assertThat(denied.get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(denied.get(1).allowed()).isTrue();
    List<ItemDecision> d = decide(s, 2, item(shadow, "k"), item(enforced, "e"));
    assertThat(d.get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(d.get(0).shadow()).isTrue();
    assertThat(d.get(0).blockedMs()).isEqualTo(9_999);
    assertThat(d.get(1).allowed()).isTrue();
    // The enforced item was consumed each time: 3 of 10.
    assertThat(d.get(1).windows().get(0).remaining()).isEqualTo(7);
  }

  @Test
  void aRequestDeniedByAnotherItemCountsTowardTheBanOfEveryItemThatBansEvenWithRoom() {
    // The worked example's shape: the anonymous limit denies first, the per-address rule bans.
    Rule anonymous = rule("anonymous").window(1, MINUTE).build();
    Rule perIp = rule("per_ip").window(30, MINUTE).ban(new BanPolicy(3, MINUTE, Duration.ofSeconds(10))).build();
    Rule shadow = rule("shadow").window(30, MINUTE).shadow(true)
        .ban(new BanPolicy(3, MINUTE, Duration.ofSeconds(10))).build();
    Store s = store();
    assertThat(decide(s, 0, item(anonymous, "a"), item(perIp, "net"), item(shadow, "net")).get(1).allowed()).isTrue();
    for (int t = 1; t <= 3; t++) {
      List<ItemDecision> d = decide(s, t, item(anonymous, "a"), item(perIp, "net"), item(shadow, "net"));
      assertThat(d.get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
      // The items that ban had room: reported as such, and their denials counted all the same.
      assertThat(d.get(1).allowed()).isTrue();
      assertThat(d.get(1).windows().get(0).remaining()).isEqualTo(29);
      assertThat(d.get(2).allowed()).isTrue();
    }
    List<ItemDecision> d = decide(s, 4, item(anonymous, "a"), item(perIp, "net"), item(shadow, "net"));
    assertThat(d.get(1).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(d.get(1).blockedMs()).isEqualTo(9_999);
    assertThat(d.get(2).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(d.get(2).shadow()).isTrue();
    // The ban is the key's: a request of the rule alone is banned too.
    assertThat(decide(s, 5, item(perIp, "net")).get(0).reason()).isEqualTo(DenyReason.BANNED);
  }

  @Test
  void aRequestAnEnforcedBanInForceDeniesCountsNothing() {
    Rule banned = rule("banned").window(10, MINUTE).ban(new BanPolicy(1, MINUTE, Duration.ofSeconds(10))).build();
    Rule other = rule("other").window(1, MINUTE).ban(new BanPolicy(2, MINUTE, Duration.ofSeconds(10))).build();
    Store s = store();
    assertThat(decide(s, 0, item(other, "o")).get(0).allowed()).isTrue();
    ban(s, banned, "k", micros(1_000));
    for (int t = 1; t <= 3; t++) {
      List<ItemDecision> d = decide(s, t, item(banned, "k"), item(other, "o"));
      assertThat(d.get(0).reason()).isEqualTo(DenyReason.BANNED);
      assertThat(d.get(1).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    }
    // The ban ends on time: retrying under it did not extend it.
    assertThat(decide(s, 1_000, item(banned, "k")).get(0).allowed()).isTrue();
    // None of the three denials counted for the other item either: it takes two of its own.
    assertThat(decide(s, 1_001, item(other, "o")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 1_002, item(other, "o")).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(decide(s, 1_003, item(other, "o")).get(0).reason()).isEqualTo(DenyReason.BANNED);
  }

  @Test
  void anAdmittedRequestCountsNothingForItemsThatFit() {
    Rule perIp = rule("per_ip").window(30, MINUTE).ban(new BanPolicy(1, MINUTE, Duration.ofSeconds(10))).build();
    Rule shadow = rule("shadow").window(1, MINUTE).shadow(true).build();
    Store s = store();
    for (int t = 0; t < 5; t++) {
      // The shadow item is over its limit from the second request on; it blocks nothing.
      assertThat(decide(s, t, item(shadow, "x"), item(perIp, "net")).get(1).allowed()).isTrue();
    }
    assertThat(decide(s, 5, item(perIp, "net")).get(0).allowed()).isTrue();
  }

  @Test
  void aCostAboveTheLimitCountsAsADenial() {
    Rule r = rule("ban").window(2, MINUTE).ban(new BanPolicy(2, MINUTE, Duration.ofSeconds(10))).build();
    Store s = store();
    assertThat(decide(s, 0, item(r, "k", 5, null)).get(0).reason()).isEqualTo(DenyReason.COST_EXCEEDS_LIMIT);
    assertThat(decide(s, 1, item(r, "k", 5, null)).get(0).reason()).isEqualTo(DenyReason.COST_EXCEEDS_LIMIT);
    assertThat(decide(s, 2, item(r, "k", 1, null)).get(0).reason()).isEqualTo(DenyReason.BANNED);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void auditKeepsExactlyTheLastDistinctValuesNewestFirst(Algorithm a) {
    assumeSupported(a);
    Rule r = rule("audit").algorithm(a).window(100, MINUTE).audit(new AuditPolicy(3, "user")).build();
    Store s = store();
    String[] users = {"u1", "u2", "u1", "u3", "u4", "u3", "ü5 \"x\""};
    for (int i = 0; i < users.length; i++) {
      assertThat(decide(s, i, item(r, "ip:10.0.0.1", 1, users[i])).get(0).allowed()).isTrue();
    }
    assertThat(audit(s, r, "ip:10.0.0.1")).containsExactly("ü5 \"x\"", "u3", "u4");
    assertThat(audit(s, r, "ip:10.0.0.2")).isEmpty();
  }

  @Test
  void onlyConsumptionIsAudited() {
    Rule r = rule("audit").window(1, MINUTE).audit(new AuditPolicy(5, "user")).build();
    Rule other = rule("other").window(1, MINUTE).build();
    Store s = store();
    decide(s, 0, item(r, "k", 0, "peek")); // cost 0 consumes nothing
    decide(s, 1, item(r, "k", 1, "first"));
    decide(s, 2, item(r, "k", 1, "denied")); // its own window denies it
    decide(s, 3, item(other, "o"));
    decide(s, 4, item(r, "k2", 1, "blocked"), item(other, "o")); // another item denies the request
    decide(s, 5, item(r, "k3", 1, null)); // no value: nothing recorded
    assertThat(audit(s, r, "k")).containsExactly("first");
    assertThat(audit(s, r, "k2")).isEmpty();
    assertThat(audit(s, r, "k3")).isEmpty();
  }

  @Test
  void aRuleThatBothBansAndAuditsDoesBoth() {
    Rule r = rule("both").window(2, MINUTE).ban(new BanPolicy(1, MINUTE, Duration.ofSeconds(1)))
        .audit(new AuditPolicy(2, "user")).build();
    Store s = store();
    List<String> seen = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      seen.add(decide(s, t, item(r, "k", 1, "u" + t)).get(0).reason().wireName());
    }
    assertThat(seen).containsExactly("none", "none", "limit_exceeded", "banned");
    assertThat(audit(s, r, "k")).containsExactly("u1", "u0");
  }
}
