package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BanPolicy;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A limiter writes the record of an automatic ban once it learns the ban from a decision, for
 * listings and for the other instances' caches. The ban is already in the store's decisions, and
 * the record may arrive late (its script loaded first, its connection busy): by then the ban may
 * have ended and a newer one started. The record must not take the newer ban, nor a new count of
 * denials, away.
 */
class AutomaticBanRecordTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  /** 2026-12-11T00:00:00Z, as the conformance suite's explicit times. */
  private static final long BASE_MS = 1_797_120_000_000L;

  private static List<ItemDecision> decide(RedisStore store, Rule rule, String key, long ms) {
    return store.decide(new Batch(List.of(new ResolvedItem(rule, key, 1, rule.windowsFor(key))), (BASE_MS + ms) * 1000))
        .toCompletableFuture().join();
  }

  @Test
  void aLateRecordOfAnEndedBanLeavesTheNewerBanInForce() {
    Rule r = Rule.builder("late.record." + System.nanoTime()).window(1, Duration.ofMinutes(1))
        .ban(new BanPolicy(1, Duration.ofMinutes(1), Duration.ofSeconds(1))).build();
    try (RedisStore s = RedisStore.builder(redis.get().uri()).ttlSlack(Duration.ofMinutes(1)).build()) {
      decide(s, r, "k", 0);
      assertThat(decide(s, r, "k", 1).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED); // banned until 1,001 ms
      ItemDecision first = decide(s, r, "k", 2).get(0);
      assertThat(first.reason()).isEqualTo(DenyReason.BANNED);
      assertThat(decide(s, r, "k", 1_001).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED); // until 2,001 ms
      // The first ban's record, as the limiter that learned it at 2 ms writes it, arriving now.
      s.policies().put(new PolicyRecord(PolicyKind.BAN, r.name(), "k", "automatic", BASE_MS + 2 + first.blockedMs()))
          .toCompletableFuture().join();
      ItemDecision second = decide(s, r, "k", 1_002).get(0);
      assertThat(second.reason()).isEqualTo(DenyReason.BANNED);
      assertThat(second.blockedMs()).isEqualTo(999);
    }
  }

  @Test
  void aLateRecordOfAnEndedBanLeavesTheDenialsCountedSinceItEnded() {
    Rule r = Rule.builder("late.count." + System.nanoTime()).window(1, Duration.ofMinutes(1))
        .ban(new BanPolicy(2, Duration.ofMinutes(1), Duration.ofSeconds(1))).build();
    try (RedisStore s = RedisStore.builder(redis.get().uri()).ttlSlack(Duration.ofMinutes(1)).build()) {
      decide(s, r, "k", 0);
      decide(s, r, "k", 1);
      decide(s, r, "k", 2); // the second denial: banned until 1,002 ms
      ItemDecision first = decide(s, r, "k", 3).get(0);
      assertThat(first.reason()).isEqualTo(DenyReason.BANNED);
      assertThat(decide(s, r, "k", 1_002).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED); // one counted
      s.policies().put(new PolicyRecord(PolicyKind.BAN, r.name(), "k", "automatic", BASE_MS + 3 + first.blockedMs()))
          .toCompletableFuture().join();
      assertThat(decide(s, r, "k", 1_003).get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED); // two: banned
      assertThat(decide(s, r, "k", 1_004).get(0).reason()).isEqualTo(DenyReason.BANNED);
    }
  }
}
