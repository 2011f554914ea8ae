package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.KeyOverride;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Keys, overrides, resets and rule changes. */
public abstract class KeysAndRulesConformanceTest extends StoreConformance {

  private static final Duration MINUTE = Duration.ofSeconds(60);

  @Test
  void overridesGiveMatchingKeysOtherWindows() {
    Rule rule = rule("tiered").window(2, MINUTE)
        .override(new KeyOverride(List.of("tier:gold:*"), List.of(Window.perSeconds(5, 60))))
        .override(new KeyOverride(List.of("vip"), List.of(Window.perSeconds(10, 60), Window.perSeconds(3, 1))))
        .override(new KeyOverride(List.of("tier:*"), List.of(Window.perSeconds(3, 60))))
        .build();
    RateLimiter limiter = limiter(rule);
    String r = rule.name();
    assertThat(limits(peek(limiter, 0, r, "tier:gold:7"))).containsExactly(5L);
    assertThat(limits(peek(limiter, 0, r, "tier:silver:1"))).containsExactly(3L);
    assertThat(limits(peek(limiter, 0, r, "vip"))).containsExactly(10L, 3L);
    assertThat(limits(peek(limiter, 0, r, "vipx"))).containsExactly(2L);
    assertThat(limits(peek(limiter, 0, r, "user:1"))).containsExactly(2L);

    assertThat(admittedOf(limiter, r, "tier:gold:7", 10)).isEqualTo(5);
    assertThat(admittedOf(limiter, r, "vip", 10)).isEqualTo(3);
    assertThat(admittedOf(limiter, r, "user:1", 10)).isEqualTo(2);
  }

  private static List<Long> limits(Decision d) {
    return d.items().get(0).windows().stream().map(WindowState::limit).toList();
  }

  private static int admittedOf(RateLimiter limiter, String rule, String key, int tries) {
    int admitted = 0;
    for (int i = 0; i < tries; i++) {
      if (at(limiter, 0, Item.of(rule, key)).allowed()) {
        admitted++;
      }
    }
    return admitted;
  }

  @Test
  void resetForgetsOneKey() {
    Rule rule = rule("reset").window(1, MINUTE).build();
    RateLimiter limiter = limiter(rule);
    String r = rule.name();
    assertThat(at(limiter, 0, Item.of(r, "a")).allowed()).isTrue();
    assertThat(at(limiter, 0, Item.of(r, "b")).allowed()).isTrue();
    limiter.reset(r, "a").toCompletableFuture().join();
    assertThat(at(limiter, 1, Item.of(r, "a")).allowed()).isTrue();
    assertThat(at(limiter, 1, Item.of(r, "b")).allowed()).isFalse();
    limiter.reset(r, "never-seen").toCompletableFuture().join();
  }

  @Test
  void resetOfAnUnknownRuleFailsNamingIt() {
    RateLimiter limiter = limiter(rule("known").window(1, MINUTE).build());
    assertThatThrownBy(() -> limiter.reset("no.such.rule", "a").toCompletableFuture().join())
        .isInstanceOf(CompletionException.class)
        .hasCauseInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no.such.rule");
  }

  /** Characters that key syntaxes give meaning to (hash tags, separators, escapes) are just bytes of a key. */
  @Test
  void keysWithAnyCharactersAreDistinct() {
    List<String> keys = List.of("plain", "with space", "with space ", " with space", "{tag}", "{tag", "tag}", "}{",
        "{}", ":", "::", "a:b", "a::b", "a:b:", "ключ", "键", "😀", "😀😀", "\u00e9", "e\u0301", "\u0000",
        "a\u0000b", "tab\tand\nnewline", "\"quoted\"", "back\\slash", "%2F", "/", "*", "?", "[a]", "\u00ff",
        "\ufeff", "sluice:x", "PLAIN");
    Rule rule = rule("keys").window(1, MINUTE).build();
    RateLimiter limiter = limiter(rule);
    for (String k : keys) {
      assertThat(at(limiter, 0, Item.of(rule.name(), k)).allowed()).as("first request of key '%s'", k).isTrue();
    }
    for (String k : keys) {
      assertThat(at(limiter, 1, Item.of(rule.name(), k)).allowed()).as("second request of key '%s'", k).isFalse();
    }
  }

  @Test
  void longestAllowedKeyWorks() {
    Rule rule = rule("long").window(1, MINUTE).build();
    RateLimiter limiter = limiter(rule);
    String emoji = "😀".repeat(128); // 512 bytes of UTF-8
    String ascii = "k".repeat(512);
    String mostlyEmoji = "😀".repeat(127) + "abcd";
    for (String k : List.of(emoji, ascii, mostlyEmoji)) {
      assertThat(at(limiter, 0, Item.of(rule.name(), k)).allowed()).isTrue();
    }
    for (String k : List.of(emoji, ascii, mostlyEmoji)) {
      assertThat(at(limiter, 0, Item.of(rule.name(), k)).allowed()).isFalse();
    }
  }

  /** Keys are never truncated or hashed: the longest keys count apart when only their last byte differs. */
  @Test
  void longestKeysThatDifferOnlyInTheirLastByteAreDistinct() {
    Rule rule = rule("tail").window(1, MINUTE).build();
    RateLimiter limiter = limiter(rule);
    // Characters a store may escape in its key names come out longer than they went in.
    List<String> stems = List.of("k".repeat(511), "}".repeat(511), "%".repeat(511), "{".repeat(511),
        "é".repeat(255) + "|");
    for (String stem : stems) {
      assertThat(at(limiter, 0, Item.of(rule.name(), stem + "a")).allowed()).isTrue();
      assertThat(at(limiter, 0, Item.of(rule.name(), stem + "b")).allowed())
          .as("a key that differs from an exhausted one only in its last byte").isTrue();
      assertThat(at(limiter, 0, Item.of(rule.name(), stem + "a")).allowed()).isFalse();
    }
  }

  /** Stores that build one name from rule and key must keep the two apart. */
  @Test
  void ruleAndKeyNeverRunTogether() {
    String ns = unique("ns");
    Rule a = Rule.builder(ns + ".a").window(1, MINUTE).build();
    Rule ab = Rule.builder(ns + ".a:b").window(1, MINUTE).build();
    Rule slash = Rule.builder(ns + ".a/b").window(1, MINUTE).build();
    RateLimiter limiter = limiter(a, ab, slash);
    assertThat(at(limiter, 0, Item.of(a.name(), "b:c")).allowed()).isTrue();
    assertThat(at(limiter, 0, Item.of(ab.name(), "c")).allowed()).isTrue();
    assertThat(at(limiter, 0, Item.of(a.name(), "b/c")).allowed()).isTrue();
    assertThat(at(limiter, 0, Item.of(slash.name(), "c")).allowed()).isTrue();
    assertThat(at(limiter, 0, Item.of(a.name(), "b:c")).allowed()).isFalse();
  }

  @Test
  void changedRulesLoseTheirStateAndUnchangedRulesKeepIt() {
    Rule kept = rule("kept").window(1, MINUTE).build();
    Rule changed = rule("changed").window(1, MINUTE).build();
    Rule retimed = rule("retimed").window(1, MINUTE).build();
    RateLimiter limiter = limiter(kept, changed, retimed);
    for (Rule r : List.of(kept, changed, retimed)) {
      assertThat(at(limiter, 0, Item.of(r.name(), "k")).allowed()).isTrue();
    }

    Rule changedNow = Rule.builder(changed.name()).window(2, MINUTE).build();
    Rule retimedNow = Rule.builder(retimed.name()).algorithm(Algorithm.FIXED_WINDOW).window(1, MINUTE).build();
    Rule keptCopy = Rule.builder(kept.name()).window(1, MINUTE).build();
    updateRules(limiter, RuleSet.of(keptCopy, changedNow, retimedNow));

    assertThat(at(limiter, 1, Item.of(kept.name(), "k")).allowed()).isFalse();
    Decision d = at(limiter, 1, Item.of(changed.name(), "k"));
    assertThat(d.allowed()).isTrue();
    assertThat(remaining(d, 0, 0)).isEqualTo(1);
    if (supports(Algorithm.FIXED_WINDOW)) {
      assertThat(at(limiter, 1, Item.of(retimed.name(), "k")).allowed()).isTrue();
    }
  }

  @Test
  void removedRuleComesBackWithoutItsOldState() {
    Rule stays = rule("stays").window(1, MINUTE).build();
    Rule leaves = rule("leaves").window(1, MINUTE).build();
    RateLimiter limiter = limiter(stays, leaves);
    assertThat(at(limiter, 0, Item.of(leaves.name(), "k")).allowed()).isTrue();
    updateRules(limiter, RuleSet.of(stays));
    assertThatThrownBy(() -> at(limiter, 1, Item.of(leaves.name(), "k")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(leaves.name());
    updateRules(limiter, RuleSet.of(stays, leaves));
    assertThat(at(limiter, 2, Item.of(leaves.name(), "k")).allowed()).isTrue();
  }

  @Test
  void timeGoingBackwardsForAKeyCountsAsTheLatestTimeSeen() {
    Assumptions.assumeTrue(clampsTimePerKey(), "the store does not clamp time per key");
    Rule log = rule("log").window(1, ms(1000)).build();
    RateLimiter limiter = limiter(log);
    assertThat(at(limiter, 1000, Item.of(log.name(), "k")).allowed()).isTrue();
    // At 0 the unit of 1000 would be a unit from the future, held until 2000; clamped to 1000 it is held 1000 more.
    Decision back = at(limiter, 0, Item.of(log.name(), "k"));
    assertThat(back.allowed()).isFalse();
    assertThat(back.retryAfterMs()).isEqualTo(1000);
    assertThat(back.items().get(0).windows()).containsExactly(ws(1, 1000, 0, 1000, 1000, true));
    assertThat(at(limiter, 2000, Item.of(log.name(), "k")).allowed()).isTrue();
  }

  @Test
  void timeGoingBackwardsNeverReopensAFixedWindow() {
    Assumptions.assumeTrue(clampsTimePerKey(), "the store does not clamp time per key");
    assumeSupported(Algorithm.FIXED_WINDOW);
    Rule fixed = rule("fixed").algorithm(Algorithm.FIXED_WINDOW).window(1, ms(10_000)).build();
    RateLimiter limiter = limiter(fixed);
    assertThat(at(limiter, 10_000, Item.of(fixed.name(), "k")).allowed()).isTrue();
    Decision back = at(limiter, 5000, Item.of(fixed.name(), "k"));
    assertThat(back.allowed()).isFalse();
    assertThat(back.retryAfterMs()).isEqualTo(10_000);
    assertThat(at(limiter, 19_999, Item.of(fixed.name(), "k")).retryAfterMs()).isEqualTo(1);
    assertThat(at(limiter, 20_000, Item.of(fixed.name(), "k")).allowed()).isTrue();
  }
}
