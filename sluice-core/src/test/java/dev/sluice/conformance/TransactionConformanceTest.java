package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.WindowState;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A request is one transaction: all its items are consumed, or none. */
public abstract class TransactionConformanceTest extends StoreConformance {

  private static final Duration MINUTE = Duration.ofSeconds(60);

  @Test
  void deniedItemConsumesNothingInTheOtherItems() {
    Rule ip = rule("ip").algorithm(Algorithm.SLIDING_LOG).window(10, MINUTE).build();
    Rule user = rule("user").algorithm(Algorithm.TOKEN_BUCKET).window(3, MINUTE).build();
    Rule global = rule("global").algorithm(Algorithm.FIXED_WINDOW).window(100, MINUTE).build();
    assumeSupported(Algorithm.TOKEN_BUCKET);
    assumeSupported(Algorithm.FIXED_WINDOW);
    RateLimiter limiter = limiter(ip, user, global);
    Item byIp = Item.of(ip.name(), "ip:10.0.0.1");
    Item byUser = Item.of(user.name(), "user:42");
    Item all = Item.of(global.name(), "all");
    for (int i = 0; i < 3; i++) {
      assertThat(at(limiter, 0, byIp, byUser, all).allowed()).isTrue();
    }

    // The user's bucket of 3 per minute refills one unit every 20 s.
    Decision d = at(limiter, 10, byIp, byUser, all);
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(19_990);
    assertThat(d.items()).extracting(ItemDecision::allowed).containsExactly(true, false, true);
    assertThat(d.items()).extracting(ItemDecision::reason)
        .containsExactly(DenyReason.NONE, DenyReason.LIMIT_EXCEEDED, DenyReason.NONE);
    d = at(limiter, 10, byUser, byIp, all);
    assertThat(d.allowed()).isFalse();

    assertThat(remaining(peek(limiter, 10, ip.name(), byIp.key()), 0, 0)).isEqualTo(7);
    assertThat(remaining(peek(limiter, 10, user.name(), byUser.key()), 0, 0)).isZero();
    assertThat(remaining(peek(limiter, 10, global.name(), all.key()), 0, 0)).isEqualTo(97);

    d = at(limiter, 10, byIp, all);
    assertThat(d.allowed()).isTrue();
    assertThat(d.items()).extracting(i -> i.windows().get(0).remaining()).containsExactly(6L, 96L);
  }

  @Test
  void requestLevelRetryIsTheLongestOverDenyingItems() {
    Rule a = rule("a").window(1, ms(1000)).build();
    Rule b = rule("b").window(1, ms(5000)).build();
    RateLimiter limiter = limiter(a, b);
    assertThat(at(limiter, 0, Item.of(a.name(), "k"), Item.of(b.name(), "k")).allowed()).isTrue();
    Decision d = at(limiter, 400, Item.of(a.name(), "k"), Item.of(b.name(), "k"));
    assertThat(d.allowed()).isFalse();
    assertThat(d.items()).extracting(ItemDecision::retryAfterMs).containsExactly(600L, 4600L);
    assertThat(d.retryAfterMs()).isEqualTo(4600);
    assertThat(d.waitMs()).isZero();
  }

  @Test
  void shapingItemDelaysTheWholeRequestAndItsDenialBlocksTheOthers() {
    assumeSupported(Algorithm.LEAKY_BUCKET);
    Rule counted = rule("counted").window(5, MINUTE).build();
    Rule shaped = rule("shaped").algorithm(Algorithm.LEAKY_BUCKET).window(2, ms(1000)).build();
    RateLimiter limiter = limiter(counted, shaped);
    Item[] request = {Item.of(counted.name(), "k"), Item.of(shaped.name(), "k")};
    assertThat(at(limiter, 0, request).waitMs()).isZero();
    assertThat(at(limiter, 0, request).waitMs()).isEqualTo(500);
    assertThat(at(limiter, 0, request).waitMs()).isEqualTo(1000);
    Decision d = at(limiter, 0, request);
    assertThat(d.allowed()).isFalse();
    assertThat(d.waitMs()).isZero();
    assertThat(d.retryAfterMs()).isEqualTo(500);
    assertThat(d.items().get(1).reason()).isEqualTo(DenyReason.WAIT_EXCEEDS_MAX_WAIT);
    assertThat(remaining(peek(limiter, 0, counted.name(), "k"), 0, 0)).isEqualTo(2);
  }

  @Test
  void shadowItemsNeverBlockAndReportTheirDenial() {
    Rule enforced = rule("enforced").window(5, MINUTE).build();
    Rule shadow = rule("shadow").window(1, MINUTE).shadow(true).build();
    RateLimiter limiter = limiter(enforced, shadow);
    Item e = Item.of(enforced.name(), "k");
    Item s = Item.of(shadow.name(), "k");

    Decision first = at(limiter, 0, e, s);
    assertThat(first.allowed()).isTrue();
    assertThat(first.shadowDenied()).isFalse();

    Decision second = at(limiter, 1, e, s);
    assertThat(second.allowed()).isTrue();
    assertThat(second.shadowDenied()).isTrue();
    assertThat(second.retryAfterMs()).isZero();
    ItemDecision shadowed = second.items().get(1);
    assertThat(shadowed.shadow()).isTrue();
    assertThat(shadowed.allowed()).isFalse();
    assertThat(shadowed.reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(shadowed.windows()).containsExactly(ws(1, 60_000, 0, 59_999, 59_999, true));

    Decision alone = at(limiter, 2, s);
    assertThat(alone.allowed()).isTrue();
    assertThat(alone.shadowDenied()).isTrue();

    assertThat(remaining(peek(limiter, 3, enforced.name(), "k"), 0, 0)).isEqualTo(3);
  }

  @Test
  void shadowItemIsConsumedOnlyWhenTheRequestIsAdmitted() {
    Rule enforced = rule("enforced").window(1, MINUTE).build();
    Rule shadow = rule("shadow").window(5, MINUTE).shadow(true).build();
    RateLimiter limiter = limiter(enforced, shadow);
    Item e = Item.of(enforced.name(), "k");
    Item s = Item.of(shadow.name(), "k");
    assertThat(at(limiter, 0, e, s).allowed()).isTrue();
    Decision denied = at(limiter, 0, e, s);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.items().get(1).allowed()).isTrue();
    assertThat(remaining(peek(limiter, 0, shadow.name(), "k"), 0, 0)).isEqualTo(4);
  }

  @Test
  void shadowShapingRuleNeverDelaysTheRequest() {
    assumeSupported(Algorithm.LEAKY_BUCKET);
    Rule enforced = rule("enforced").window(10, MINUTE).build();
    Rule shadow = rule("shadow").algorithm(Algorithm.LEAKY_BUCKET).window(1, ms(1000)).shadow(true).build();
    RateLimiter limiter = limiter(enforced, shadow);
    Item e = Item.of(enforced.name(), "k");
    Item s = Item.of(shadow.name(), "k");
    assertThat(at(limiter, 0, e, s).waitMs()).isZero();
    Decision queued = at(limiter, 0, e, s);
    assertThat(queued.allowed()).isTrue();
    assertThat(queued.items().get(1).waitMs()).isEqualTo(1000);
    assertThat(queued.waitMs()).as("a shadow rule reports its wait but does not impose it").isZero();
    Decision overflow = at(limiter, 0, e, s);
    assertThat(overflow.allowed()).isTrue();
    assertThat(overflow.shadowDenied()).isTrue();
    assertThat(overflow.waitMs()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void peekConsumesNothing(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("peek").algorithm(algorithm).window(2, ms(1000)).build();
    RateLimiter limiter = limiter(rule);
    for (int i = 0; i < 3; i++) {
      Decision d = peek(limiter, 0, rule.name(), "k");
      assertThat(d.allowed()).isTrue();
      assertThat(d.waitMs()).isZero();
      assertThat(d.items().get(0).windows()).containsExactly(ws(2, 1000, 2, 0, 0, false));
    }
    Decision d = at(limiter, 0, Item.of(rule.name(), "k", 2));
    assertThat(d.allowed()).isTrue();
    // A leaky bucket still queues one more: its second slot is 1000 ms away, within max_wait.
    long left = algorithm == Algorithm.LEAKY_BUCKET ? 1 : 0;
    assertThat(remaining(d, 0, 0)).isEqualTo(left);
    assertThat(peek(limiter, 0, rule.name(), "k").items().get(0).windows()).isEqualTo(d.items().get(0).windows());
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void costLargerThanAWindowsLimitIsDeniedForever(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("cost").algorithm(algorithm).window(5, ms(1000)).window(2, ms(1000)).build();
    RateLimiter limiter = limiter(rule);
    Decision before = peek(limiter, 0, rule.name(), "k");
    Decision d = at(limiter, 0, Item.of(rule.name(), "k", 3));
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(WindowState.NEVER);
    ItemDecision item = d.items().get(0);
    assertThat(item.reason()).isEqualTo(DenyReason.COST_EXCEEDS_LIMIT);
    assertThat(item.windows()).extracting(WindowState::exceeded).containsExactly(false, true);
    assertThat(item.windows().get(1).retryAfterMs()).isEqualTo(WindowState.NEVER);
    assertThat(peek(limiter, 0, rule.name(), "k").items().get(0).windows())
        .isEqualTo(before.items().get(0).windows());
    assertThat(at(limiter, 0, Item.of(rule.name(), "k", 2)).allowed()).isTrue();
  }

  @Test
  void itemWhoseCostCanNeverFitDeniesTheRequestAndConsumesNothingElse() {
    Rule small = rule("small").window(5, MINUTE).build();
    Rule other = rule("other").window(5, MINUTE).build();
    RateLimiter limiter = limiter(small, other);
    Decision d = at(limiter, 0, Item.of(other.name(), "k", 1), Item.of(small.name(), "k", 9));
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(WindowState.NEVER);
    assertThat(d.items()).extracting(ItemDecision::reason).containsExactly(DenyReason.NONE,
        DenyReason.COST_EXCEEDS_LIMIT);
    assertThat(remaining(peek(limiter, 0, other.name(), "k"), 0, 0)).isEqualTo(5);
  }

  @Test
  void repeatedItemsAreDecidedAsOneItemOfSummedCost() {
    Rule rule = rule("dup").window(5, MINUTE).build();
    Rule other = rule("other").window(5, MINUTE).build();
    RateLimiter limiter = limiter(rule, other);
    String r = rule.name();
    assertThat(at(limiter, 0, Item.of(r, "k", 2)).allowed()).isTrue();

    // 2 + 2 more would make 6 of 5, although each part alone fits.
    Decision d = at(limiter, 1, Item.of(r, "k", 2), Item.of(r, "k", 2));
    assertThat(d.allowed()).isFalse();
    assertThat(d.items()).extracting(ItemDecision::cost).containsExactly(2L, 2L);
    assertThat(d.items()).extracting(ItemDecision::reason)
        .containsExactly(DenyReason.LIMIT_EXCEEDED, DenyReason.LIMIT_EXCEEDED);
    assertThat(remaining(peek(limiter, 1, r, "k"), 0, 0)).isEqualTo(3);

    d = at(limiter, 2, Item.of(r, "k", 1), Item.of(other.name(), "k", 1), Item.of(r, "k", 2));
    assertThat(d.allowed()).isTrue();
    assertThat(d.items()).extracting(ItemDecision::rule).containsExactly(r, other.name(), r);
    assertThat(d.items()).extracting(ItemDecision::cost).containsExactly(1L, 1L, 2L);
    assertThat(d.items().get(0).windows()).isEqualTo(d.items().get(2).windows());
    assertThat(remaining(d, 0, 0)).isZero();

    d = at(limiter, 3, Item.of(r, "fresh", 3), Item.of(r, "fresh", 3));
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).isEqualTo(WindowState.NEVER);
    assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.COST_EXCEEDS_LIMIT);
  }
}
