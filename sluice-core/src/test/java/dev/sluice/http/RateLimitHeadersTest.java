package dev.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The RateLimit fields, and the policies an instance remembers per rule. */
class RateLimitHeadersTest {
  private final RateLimitHeaders headers = new RateLimitHeaders();

  private static ItemDecision item(String rule, String key, boolean shadow, WindowState... ws) {
    return new ItemDecision(rule, key, 1, true, DenyReason.NONE, 0, List.of(ws), shadow);
  }

  private static WindowState window(long limit, long periodMs, long remaining, long resetMs) {
    return new WindowState(limit, periodMs, remaining, 0, resetMs, false);
  }

  private RateLimitHeaders.Values of(ItemDecision... items) {
    return headers.of(Decision.of(List.of(items), false));
  }

  @Test
  void everyWindowIsAPolicyNamedAfterItsRuleAndPeriod() {
    RateLimitHeaders.Values v = of(item("auth.createToken", "u", false, window(20, 60_000, 15, 57_001),
        window(5, 3_000, 0, 2_000)));
    assertThat(v.policy()).isEqualTo("\"auth.createToken.60s\";q=20;w=60, \"auth.createToken.3s\";q=5;w=3");
    assertThat(v.rateLimit()).isEqualTo("\"auth.createToken.60s\";r=15;t=58, \"auth.createToken.3s\";r=0;t=2");
  }

  @Test
  void aRuleWhoseKeysHaveOtherWindowsGetsThePolicyOfEachKeysWindows() {
    ItemDecision standard = item("api", "free", false, window(10, 1_000, 9, 100));
    ItemDecision premium = item("api", "gold", false, window(100, 1_000, 99, 10), window(1000, 60_000, 999, 60));
    for (int i = 0; i < 3; i++) {
      assertThat(of(standard).policy()).isEqualTo("\"api.1s\";q=10;w=1");
      assertThat(of(premium).policy()).isEqualTo("\"api.1s\";q=100;w=1, \"api.60s\";q=1000;w=60");
      assertThat(of(premium).rateLimit()).isEqualTo("\"api.1s\";r=99;t=1, \"api.60s\";r=999;t=1");
    }
  }

  @Test
  void aRuleWhoseWindowsChangedGetsItsNewPolicy() {
    assertThat(of(item("api", "k", false, window(10, 1_500, 9, 0))).policy()).isEqualTo("\"api.1500ms\";q=10;w=2");
    for (long limit = 11; limit < 30; limit++) {
      assertThat(of(item("api", "k", false, window(limit, 1_500, 9, 0))).policy())
          .isEqualTo("\"api.1500ms\";q=" + limit + ";w=2");
    }
  }

  @Test
  void severalKeysOfOneRuleShareItsPolicyWithTheStateOfTheKeyWithTheLeastRoom() {
    RateLimitHeaders.Values v = of(item("ip", "10.0.0.1", false, window(5, 1_000, 4, 200)),
        item("ip", "10.0.0.2", false, window(5, 1_000, 3, 400)), item("global", "all", false, window(9, 2_000, 8, 0)));
    assertThat(v.policy()).isEqualTo("\"ip.1s\";q=5;w=1, \"global.2s\";q=9;w=2");
    assertThat(v.rateLimit()).isEqualTo("\"ip.1s\";r=3;t=1, \"global.2s\";r=8;t=0");
    assertThat(v.policy() + v.rateLimit()).doesNotContain("pk=").doesNotContain("10.0.0");
  }

  @Test
  void aHundredItemsWithLongKeysGetFieldsWithinTheBudget() {
    // The request that made two 144 KB field lines: 100 keys of 512 bytes, each carried as pk.
    List<ItemDecision> items = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      items.add(item("checkout.new", String.format("%03d", i) + "k".repeat(509), false,
          window(100, 60_000, 99, 60_000), window(10, 1_000, 9, 1_000)));
    }
    RateLimitHeaders.Values v = headers.of(Decision.of(items, false));
    assertThat(v.policy().length() + v.rateLimit().length()).isLessThanOrEqualTo(RateLimitHeaders.BUDGET_BYTES);
    assertThat(v.policy()).isEqualTo("\"checkout.new.1s\";q=10;w=1, \"checkout.new.60s\";q=100;w=60");
    assertThat(v.rateLimit()).isEqualTo("\"checkout.new.1s\";r=9;t=1, \"checkout.new.60s\";r=99;t=60");
  }

  @Test
  void manyRulesAreReportedTightestFirstWithinTheBudget() {
    List<ItemDecision> items = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      // Rule i has i units left of 100: the tightest rules are the first ones.
      items.add(item(longName(i), "k", false, window(100, 60_000, i, 60_000)));
    }
    RateLimitHeaders.Values v = headers.of(Decision.of(items, false));
    assertThat(v.policy().length() + v.rateLimit().length()).isLessThanOrEqualTo(RateLimitHeaders.BUDGET_BYTES);
    List<String> reported = names(v.rateLimit());
    assertThat(reported).isNotEmpty().hasSizeLessThan(100);
    for (int i = 0; i < reported.size(); i++) {
      assertThat(reported.get(i)).isEqualTo("\"" + longName(i) + ".60s\"");
    }
    assertThat(names(v.policy())).isEqualTo(reported);
  }

  @Test
  void everyDenyingWindowIsReportedFirstEvenPastTheBudget() {
    List<ItemDecision> items = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      items.add(item(longName(i), "k", false, window(100, 60_000, 50, 60_000)));
    }
    for (int i = 80; i < 100; i++) {
      items.add(denied(longName(i), window(100, 60_000, 50, 60_000), deny(10, 1_000, 5_000)));
    }
    RateLimitHeaders.Values v = headers.of(Decision.of(items, false));
    List<String> reported = names(v.rateLimit());
    for (int i = 80; i < 100; i++) {
      assertThat(reported.get(i - 80)).isEqualTo("\"" + longName(i) + ".1s\"");
    }
    assertThat(v.rateLimit()).contains("\"" + longName(99) + ".1s\";r=0;t=5");
    int size = v.policy().length() + v.rateLimit().length();
    assertThat(size).isGreaterThan(RateLimitHeaders.BUDGET_BYTES).isLessThanOrEqualTo(RateLimitHeaders.MAX_BYTES);
  }

  @Test
  void theFieldsNeverPassTheirHardBoundWhateverDenied() {
    List<ItemDecision> items = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      items.add(denied(longName(i), deny(10, 1_000, 500), deny(20, 2_000, 500), deny(30, 3_000, 500)));
    }
    RateLimitHeaders.Values v = headers.of(Decision.of(items, false));
    assertThat(v.policy().length() + v.rateLimit().length()).isLessThanOrEqualTo(RateLimitHeaders.MAX_BYTES);
    assertThat(names(v.policy())).isEqualTo(names(v.rateLimit())).isNotEmpty();
  }

  @Test
  void aSingleRuleWithManyWindowsIsBoundedToo() {
    WindowState[] ws = new WindowState[300];
    for (int i = 0; i < ws.length; i++) {
      ws[i] = window(1000 + i, 1_000L * (i + 1), 999, 0);
    }
    RateLimitHeaders.Values v = of(item("many", "k", false, ws));
    assertThat(v.policy().length() + v.rateLimit().length()).isLessThanOrEqualTo(RateLimitHeaders.BUDGET_BYTES);
    assertThat(v.isEmpty()).isFalse();
  }

  private static String longName(int i) {
    return String.format("rule%03d.", i) + "x".repeat(120);
  }

  private static WindowState deny(long limit, long periodMs, long retryMs) {
    return new WindowState(limit, periodMs, 0, retryMs, retryMs, true);
  }

  private static ItemDecision denied(String rule, WindowState... ws) {
    return new ItemDecision(rule, "k", 1, false, DenyReason.LIMIT_EXCEEDED, 0, List.of(ws), false);
  }

  /** The quoted names of a field's list members, in order. */
  private static List<String> names(String field) {
    List<String> out = new ArrayList<>();
    for (String m : field.split(", ")) {
      out.add(m.substring(0, m.indexOf(';')));
    }
    return out;
  }

  @Test
  void shadowItemsAndItemsWithoutWindowsAreNotAnnounced() {
    assertThat(of(item("watched", "k", true, window(5, 1_000, 0, 0))).isEmpty()).isTrue();
    assertThat(of(item("open", "k", false)).isEmpty()).isTrue();
    RateLimitHeaders.Values v = of(item("watched", "k", true, window(5, 1_000, 0, 0)),
        item("watched", "j", false, window(5, 1_000, 1, 0)));
    assertThat(v.policy()).isEqualTo("\"watched.1s\";q=5;w=1");
  }

  @Test
  void aBanGivesRetryAfterFromTheTimeItStillLastsRoundedUpAndNoRateLimitFields() {
    Decision d = Decision.of(List.of(
        new ItemDecision("login", "ip:1", 1, false, DenyReason.BANNED, 0, List.of(), false, 90_001)), false);
    assertThat(RateLimitHeaders.retryAfterSeconds(d)).isEqualTo(91);
    assertThat(headers.of(d).isEmpty()).isTrue();
  }

  @Test
  void aDenyListedKeyGetsNoRetryAfterAsACostThatCanNeverFit() {
    Decision listed = Decision.of(List.of(
        new ItemDecision("login", "ip:1", 1, false, DenyReason.DENY_LISTED, 0, List.of(), false, WindowState.NEVER),
        new ItemDecision("login", "ip:2", 1, false, DenyReason.BANNED, 0, List.of(), false, 5_000)), false);
    assertThat(RateLimitHeaders.retryAfterSeconds(listed)).isEqualTo(-1);
    Decision never = Decision.of(List.of(new ItemDecision("api", "k", 9, false, DenyReason.COST_EXCEEDS_LIMIT, 0,
        List.of(new WindowState(5, 1_000, 5, WindowState.NEVER, 0, true)), false)), false);
    assertThat(RateLimitHeaders.retryAfterSeconds(never)).isEqualTo(-1);
  }

  @Test
  void policyNamesAreStructuredFieldStrings() {
    assertThat(of(item("a\"b\\c\u00e9", "k", false, window(1, 1_000, 0, 0))).policy())
        .isEqualTo("\"a\\\"b\\\\c_.1s\";q=1;w=1");
  }
}
