package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.WindowState;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MemoryStoreKeyCapTest {
  final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  final MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(2).build();
  final Rule rule = Rule.builder("capped").window(5, Duration.ofSeconds(1)).build();
  final Rule other = Rule.builder("other").window(5, Duration.ofSeconds(1)).build();
  final RateLimiter limiter = Sluice.builder().store(store).rules(rule, other).build();

  @Test
  void fullStoreDeniesNewKeysAndKeepsServingHeldOnes() {
    assertThat(limiter.acquire("capped", "a").allowed()).isTrue();
    assertThat(limiter.acquire("capped", "b").allowed()).isTrue();

    Decision d = limiter.acquire("capped", "c");
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfterMs()).as("when the held keys are idle").isEqualTo(1000);
    ItemDecision item = d.items().get(0);
    assertThat(item.reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(item.windows()).containsExactly(new WindowState(5, 1000, 0, 1000, 0, true));
    assertThat(store.size()).isEqualTo(2);

    Decision a = limiter.acquire("capped", "a");
    assertThat(a.allowed()).isTrue();
    assertThat(a.items().get(0).windows().get(0).remaining()).isEqualTo(3);
    assertThat(limiter.acquire("other", "a").items().get(0).reason())
        .as("the cap counts keys of every rule").isEqualTo(DenyReason.STORE_FULL);
  }

  @Test
  void requestNamingANewKeyOfAFullStoreConsumesNothingElse() {
    limiter.acquire("capped", "a");
    limiter.acquire("capped", "b");
    Decision d = limiter.acquire(Request.of(Item.of("capped", "a", 2), Item.of("capped", "c")));
    assertThat(d.allowed()).isFalse();
    assertThat(d.items()).extracting(ItemDecision::reason).containsExactly(DenyReason.NONE, DenyReason.STORE_FULL);
    assertThat(limiter.acquire("capped", "a", 0).items().get(0).windows().get(0).remaining()).isEqualTo(4);
  }

  /** Regression: a full-store decision evaluated held keys on the ticker instead of the request's time. */
  @Test
  void fullStoreDecisionKeepsTheRequestsExplicitTimeForHeldKeys() {
    long t = ticker.nowMicros() - 3_600_000_000L; // an hour behind the store's ticker, as in a replay
    Rule once = Rule.builder("once").window(1, Duration.ofSeconds(60)).build();
    limiter.updateRules(RuleSet.of(rule, other, once));
    assertThat(limiter.acquire(Request.of("once", "a").atMicros(t)).allowed()).isTrue();
    assertThat(limiter.acquire(Request.of("once", "b").atMicros(t)).allowed()).isTrue();

    Decision full = limiter.acquire(Request.of(Item.of("once", "a", 0), Item.of("once", "c")).atMicros(t + 1000));
    assertThat(full.items().get(1).reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(full.items().get(0).windows().get(0).resetAfterMs()).isEqualTo(59_999);

    Decision again = limiter.acquire(Request.of("once", "a").atMicros(t + 2000));
    assertThat(again.allowed()).as("the key's own clock must not have jumped to the ticker's").isFalse();
    assertThat(again.retryAfterMs()).isEqualTo(59_998);
  }

  /** Regression: the sweep made when the cap was reached judged idleness on the ticker, not the request's time. */
  @Test
  void capReachedDuringAReplayBehindTheTickerForgetsNoLiveKey() {
    long t = ticker.nowMicros() - 3_600_000_000L;
    Rule once = Rule.builder("once").window(1, Duration.ofSeconds(60)).build();
    limiter.updateRules(RuleSet.of(rule, other, once));
    limiter.acquire(Request.of("once", "a").atMicros(t));
    limiter.acquire(Request.of("once", "b").atMicros(t));
    assertThat(limiter.acquire(Request.of("once", "c").atMicros(t + 1000)).items().get(0).reason())
        .isEqualTo(DenyReason.STORE_FULL);
    assertThat(limiter.acquire(Request.of("once", "a").atMicros(t + 2000)).allowed()).isFalse();
    assertThat(limiter.acquire(Request.of("once", "c").atMicros(t + 60_000_000)).allowed())
        .as("at the replay's own time the old keys are idle and make room").isTrue();
  }

  @Test
  void idleKeysMakeRoomWhenTheCapIsReached() {
    limiter.acquire("capped", "a");
    limiter.acquire("capped", "b");
    ticker.advanceMillis(1000);
    assertThat(limiter.acquire("capped", "c").allowed()).isTrue();
    assertThat(store.size()).isEqualTo(1);
  }

  @Test
  void resetAndRuleChangesMakeRoom() {
    limiter.acquire("capped", "a");
    limiter.acquire("other", "b");
    limiter.reset("capped", "a").toCompletableFuture().join();
    assertThat(store.size()).isEqualTo(1);
    assertThat(limiter.acquire("capped", "c").allowed()).isTrue();

    limiter.updateRules(RuleSet.of(rule));
    assertThat(store.size()).isEqualTo(1);
    assertThat(limiter.acquire("capped", "d").allowed()).isTrue();
  }

  @Test
  void capMustBePositive() {
    assertThatThrownBy(() -> MemoryStore.builder().maxKeys(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxKeys").hasMessageContaining("0");
  }
}
