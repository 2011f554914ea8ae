package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.DenyReason;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.conformance.BansAndAuditConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryBansAndAuditTest extends BansAndAuditConformanceTest {
  private final FakeTicker ticker = new FakeTicker(BASE_MS * 1000);

  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(ticker).automaticSweeps(false).build();
  }

  private MemoryStore memory() {
    return (MemoryStore) store();
  }

  @Override
  protected void ban(Store store, Rule rule, String key, long untilMicros) {
    assertThat(((MemoryStore) store).banKey(rule, key, untilMicros)).isTrue();
  }

  @Override
  protected void unban(Store store, Rule rule, String key) {
    ((MemoryStore) store).unbanKey(rule.name(), key);
  }

  @Override
  protected List<String> audit(Store store, Rule rule, String key) {
    return ((MemoryStore) store).audit(rule.name(), key);
  }

  @Test
  void theAuditListLastsAsLongAsTheKeysStateAndASweepFreesItsBytes() {
    Rule r = rule("audit").window(5, Duration.ofSeconds(10)).audit(new AuditPolicy(2, "user")).build();
    MemoryStore s = memory();
    long before = s.bytes();
    decide(s, 0, item(r, "k", 1, "a"));
    decide(s, 0, item(r, "k", 1, "b"));
    assertThat(audit(s, r, "k")).containsExactly("b", "a");
    ticker.setMicros(micros(9_999));
    assertThat(audit(s, r, "k")).containsExactly("b", "a");
    ticker.setMicros(micros(10_000));
    assertThat(audit(s, r, "k")).isEmpty();
    s.cleanUp(micros(10_000));
    assertThat(s.bytes()).isEqualTo(before);
    assertThat(s.recount()[1]).isEqualTo(s.bytes());
  }

  @Test
  void aBanOutlivesTheKeysStateAndIsDroppedWhenItEnds() {
    Rule r = rule("ban").window(1, Duration.ofSeconds(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
        Duration.ofMinutes(10))).build();
    MemoryStore s = memory();
    decide(s, 0, item(r, "k"));
    decide(s, 1, item(r, "k"));
    assertThat(s.recount()[1]).isEqualTo(s.bytes());
    s.cleanUp(micros(120_000)); // the state is idle, the ban is not over
    assertThat(s.held(r.name(), "k")).isNull();
    assertThat(decide(s, 120_000, item(r, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(s.held(r.name(), "k")).as("a banned key's state is not created").isNull();
    s.cleanUp(micros(600_001));
    assertThat(s.bytes()).isZero();
    assertThat(decide(s, 600_001, item(r, "k")).get(0).allowed()).isTrue();
  }

  @Test
  void bansAreKeptAcrossAChangeOfTheRulesWindowsAndDroppedWithTheRule() {
    Rule r = rule("ban").window(1, Duration.ofSeconds(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
        Duration.ofMinutes(10))).build();
    Rule changed = r.toBuilder().windows(List.of(new dev.sluice.Window(2, Duration.ofSeconds(1)))).build();
    MemoryStore s = memory();
    s.banKey(r, "k", micros(1_000));
    s.rulesChanged(RuleSet.of(r), RuleSet.of(changed));
    assertThat(decide(s, 0, item(changed, "k")).get(0).reason()).isEqualTo(DenyReason.BANNED);
    Rule unbanning = changed.toBuilder().ban(null).build();
    s.rulesChanged(RuleSet.of(changed), RuleSet.of(unbanning));
    assertThat(s.bytes()).isEqualTo(s.recount()[1]);
    assertThat(decide(s, 0, item(changed, "k")).get(0).allowed()).isTrue();
  }

  @Test
  void theBooleanPathOfARuleThatBansAnswersBanned() {
    Rule r = rule("ban").window(1, Duration.ofMinutes(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
        Duration.ofMinutes(10))).build();
    MemoryStore s = memory();
    assertThat(s.tryAcquire(r, "k", 1, Request.STORE_CLOCK)).isTrue();
    assertThat(s.tryAcquire(r, "k", 1, Request.STORE_CLOCK)).isFalse();
    ticker.advance(Duration.ofMinutes(2));
    assertThat(s.tryAcquire(r, "k", 1, Request.STORE_CLOCK)).as("banned for 10 minutes").isFalse();
    ticker.advance(Duration.ofMinutes(9));
    assertThat(s.tryAcquire(r, "k", 1, Request.STORE_CLOCK)).isTrue();
  }

  @Test
  void aRequestDeniedOnlyBecauseTheStoreIsFullCountsNoDenial() {
    MemoryStore s = MemoryStore.builder().ticker(ticker).automaticSweeps(false).maxKeys(4).build();
    try {
      Rule perIp = rule("per_ip").window(30, Duration.ofMinutes(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
          Duration.ofMinutes(10))).build();
      Rule flood = rule("flood").window(10, Duration.ofMinutes(1)).build();
      assertThat(decide(s, 0, item(perIp, "net")).get(0).allowed()).isTrue();
      int k = 0;
      while (decide(s, 1, item(flood, "f" + k)).get(0).reason() != DenyReason.STORE_FULL) {
        k++;
      }
      for (int t = 2; t < 5; t++) {
        List<dev.sluice.ItemDecision> d = decide(s, t, item(flood, "new" + t), item(perIp, "net"));
        assertThat(d.get(0).reason()).isEqualTo(DenyReason.STORE_FULL);
      }
      // The store's lack of room is not the caller's doing: one counted denial would have banned.
      assertThat(decide(s, 5, item(perIp, "net")).get(0).allowed()).isTrue();
    } finally {
      s.close();
    }
  }

  @Test
  void bansAndAuditListsAreBoundedByTheByteBudget() {
    MemoryStore s = MemoryStore.builder().ticker(ticker).automaticSweeps(false).maxBytes(50_000).build();
    try {
      Rule r = rule("ban").window(100, Duration.ofMinutes(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
          Duration.ofMinutes(10))).audit(new AuditPolicy(100, "user")).build();
      int stored = 0;
      for (int i = 0; i < 10_000; i++) {
        stored += s.banKey(r, "key-" + i, micros(60_000)) ? 1 : 0;
      }
      assertThat(stored).isBetween(1, 9_999);
      assertThat(s.bytes()).isLessThanOrEqualTo(50_000).isEqualTo(s.recount()[1]);
      for (int i = 0; i < 1_000; i++) {
        decide(s, 0, item(r, "audited", 1, "user-" + i));
      }
      assertThat(s.bytes()).isLessThanOrEqualTo(50_000).isEqualTo(s.recount()[1]);
    } finally {
      s.close();
    }
  }
}
