package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The layout is read back from names the store itself makes, so a change of the store's naming fails here. */
class KeyLayoutTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void theRuleOfEveryNameTheStoreMakesIsReadBack() {
    SplittableRandom random = new SplittableRandom(7);
    String ruleChars = "abcXYZ019_.:/-";
    String keyChars = "a{}|%:\\*?[] é键\u0000";
    for (String prefix : new String[] {"sluice:", "", "t*st:", "a|b:"}) {
      RedisStore store = RedisStore.builder(redis.get().uri()).prefix(prefix).build();
      try {
        KeyLayout layout = new KeyLayout(prefix);
        for (int i = 0; i < 2_000; i++) {
          String rule = random(random, ruleChars, 1 + random.nextInt(20));
          String key = random(random, keyChars, 1 + random.nextInt(30));
          byte[] name = bytes(store.keyName(rule, key));
          assertThat(layout.ruleOf(name)).as("%s %s", rule, key).isEqualTo(rule);
        }
      } finally {
        store.close();
      }
    }
  }

  private static String random(SplittableRandom r, String chars, int length) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < length; i++) {
      sb.append(chars.charAt(r.nextInt(chars.length())));
    }
    return sb.toString();
  }

  @Test
  void namesTheStoreNeverMakesHaveNoRule() {
    KeyLayout layout = new KeyLayout("sluice:");
    for (String name : new String[] {"sluice:", "sluice:legacy", "sluice:{broken", "sluice:{rule}", "sluice:{|k}",
        "sluice:{a b|k}", "sluice:{rule|k}x", "sluice:{rule|k}}", "sluice:{rule|a}b}", "other:{rule|k}",
        "sluice{rule|k}", "sluice:{" + "r".repeat(129) + "|k}"}) {
      assertThat(layout.ruleOf(bytes(name))).as(name).isNull();
    }
    assertThat(layout.ruleOf(bytes("sluice:{rule|}"))).isEqualTo("rule");
    assertThat(layout.ruleOf(bytes("sluice:{a.b|c|d}"))).isEqualTo("a.b");
  }

  @Test
  void aBanOrAuditKeyBesideAStateKeyHasItsRuleButIsNotState() {
    KeyLayout layout = new KeyLayout("sluice:");
    assertThat(layout.ruleOf(bytes("sluice:{auth.login|user:1}:ban"))).isNull();
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}:ban"))).isEqualTo("auth.login");
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}:audit"))).isEqualTo("auth.login");
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}"))).isNull();
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}:other"))).isNull();
    assertThat(layout.siblingRuleOf(bytes("sluice:legacy:ban"))).isNull();
    assertThat(layout.siblingRuleOf(bytes(":ban"))).isNull();
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}:refund:0123456789abcdef"))).isEqualTo("auth.login");
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}:refund:0123456789abcdeg"))).isNull();
    assertThat(layout.siblingRuleOf(bytes("sluice:{auth.login|user:1}:refund:0123"))).isNull();
  }

  @Test
  void thePatternMatchesThePrefixLiterally() {
    assertThat(new String(new KeyLayout("sluice:").matchPattern(), StandardCharsets.UTF_8)).isEqualTo("sluice:*");
    assertThat(new String(new KeyLayout("a*b?c[d]e\\f:").matchPattern(), StandardCharsets.UTF_8))
        .isEqualTo("a\\*b\\?c\\[d\\]e\\\\f:*");
    assertThat(new String(new KeyLayout("").matchPattern(), StandardCharsets.UTF_8)).isEqualTo("*");
  }

  @Test
  void aPrefixWithBracesIsRejectedAsTheStoreRejectsIt() {
    assertThatThrownBy(() -> new KeyLayout("a{b")).hasMessageContaining("must not contain '{' or '}'");
    assertThatThrownBy(() -> RedisStore.builder("redis://h").prefix("a{b")).isInstanceOf(IllegalArgumentException.class);
  }
}
