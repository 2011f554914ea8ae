package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.WindowState;
import dev.sluice.algorithm.AlgorithmTable;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** How the memory store shares its caps among rules, and what a rule whose share is full is told. */
class MemoryStoreFairShareTest {
  final FakeTicker ticker = new FakeTicker();
  final Rule export = Rule.builder("reports.export").window(10, Duration.ofDays(1)).build();
  final Rule token = Rule.builder("auth.createToken").window(20, Duration.ofMinutes(1))
      .window(5, Duration.ofSeconds(3)).build();

  /** Regression: 1,000 keys of a one-day rule filled a 1,000-key store, and every other rule got store_full for a day. */
  @Test
  void oneRulesKeysCannotLockOutAnotherRule() {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(1000).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(export, token).build();
    int admitted = 0;
    for (int i = 0; i < 1000; i++) {
      admitted += limiter.acquire("reports.export", "tenant:" + i).allowed() ? 1 : 0;
    }
    assertThat(admitted).as("its guarantee (a quarter) and the pool (half)").isEqualTo(750);
    assertThat(store.keys("reports.export")).isEqualTo(750);
    assertThat(store.fullDenials("reports.export")).isEqualTo(250);

    Decision d = limiter.acquire("auth.createToken", "ip:10.0.0.1");
    assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.NONE);
    assertThat(d.allowed()).isTrue();
    for (int i = 1; i < 250; i++) {
      assertThat(limiter.acquire("auth.createToken", "ip:10.0.1." + i).allowed()).as("its whole guarantee").isTrue();
    }
    assertThat(store.keys("auth.createToken")).isEqualTo(250);
    assertThat(store.fullDenials("auth.createToken")).isZero();
  }

  @Test
  void aRuleAloneCanUseTheWholeStore() {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(100).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(export).build();
    for (int i = 0; i < 100; i++) {
      assertThat(limiter.acquire("reports.export", "tenant:" + i).allowed()).isTrue();
    }
    assertThat(limiter.acquire("reports.export", "tenant:100").items().get(0).reason())
        .isEqualTo(DenyReason.STORE_FULL);
  }

  /** Retrying a store_full key a millisecond before its retryAfterMs fails; retrying at it succeeds. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void storeFullRetryAfterIsTruthful(Algorithm algorithm) {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(4).build();
    Rule once = Rule.builder("once").algorithm(algorithm).window(1, Duration.ofMinutes(1)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(once).build();
    for (int i = 0; i < 4; i++) {
      assertThat(limiter.acquire("once", "k" + i).allowed()).isTrue();
      ticker.advanceMillis(1000);
    }
    ticker.advanceMillis(6_000);
    Decision full = limiter.acquire("once", "new");
    assertThat(full.items().get(0).reason()).isEqualTo(DenyReason.STORE_FULL);
    long retry = full.retryAfterMs();
    assertThat(retry).isPositive().isLessThanOrEqualTo(60_000);

    ticker.advanceMillis(retry - 1);
    Decision early = limiter.acquire("once", "new");
    assertThat(early.items().get(0).reason()).as("a millisecond early").isEqualTo(DenyReason.STORE_FULL);
    assertThat(early.retryAfterMs()).isEqualTo(1);
    ticker.advanceMillis(1);
    assertThat(limiter.acquire("once", "new").allowed()).as("at retryAfterMs").isTrue();
  }

  /**
   * A rule borrowing beyond its guarantee is told when its own or another borrower's keys leave;
   * a rule within its guarantee whose next key needs the pool is told the same, and keys of rules
   * within their guarantee do not count for it.
   */
  @Test
  void storeFullRetryAfterNamesOnlyKeysWhoseRemovalMakesRoom() {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(8).build();
    Rule daily = Rule.builder("daily").window(1, Duration.ofDays(1)).build();
    Rule minute = Rule.builder("minute").window(1, Duration.ofMinutes(1)).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(daily, minute).build();
    assertThat(store.guaranteedKeys()).isEqualTo(2);
    for (int i = 0; i < 6; i++) {
      assertThat(limiter.acquire("daily", "d" + i).allowed()).isTrue();
    }
    assertThat(limiter.acquire("minute", "m0").allowed()).isTrue();
    assertThat(limiter.acquire("minute", "m1").allowed()).isTrue();

    Decision minuteFull = limiter.acquire("minute", "m2");
    assertThat(minuteFull.items().get(0).reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(minuteFull.retryAfterMs()).as("its own keys leave in a minute").isEqualTo(60_000);
    Decision dailyFull = limiter.acquire("daily", "d6");
    assertThat(dailyFull.retryAfterMs()).as("the minute keys leaving makes no room beyond the guarantee")
        .isEqualTo(Duration.ofDays(1).toMillis());

    ticker.advanceMillis(60_000);
    assertThat(limiter.acquire("minute", "m2").allowed()).isTrue();
    Decision stillFull = limiter.acquire("daily", "d6");
    assertThat(stillFull.items().get(0).reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(stillFull.retryAfterMs()).isEqualTo(Duration.ofDays(1).toMillis() - 60_000);
  }

  /** Decisions on held keys of a full rule are those of a store with room to spare. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void heldKeysKeepDecidingExactlyWhenTheirRuleIsFull(Algorithm algorithm) {
    Rule rule = Rule.builder("held").algorithm(algorithm).window(5, Duration.ofSeconds(2))
        .window(8, Duration.ofSeconds(10)).build();
    Rule filler = Rule.builder("filler").window(1, Duration.ofDays(1)).build();
    FakeTicker roomyTicker = new FakeTicker();
    // 6 keys: each rule is guaranteed 1, and 4 are shared.
    MemoryStore full = MemoryStore.builder().ticker(ticker).maxKeys(6).build();
    MemoryStore roomy = MemoryStore.builder().ticker(roomyTicker).build();
    RateLimiter a = Sluice.builder().store(full).rules(rule, filler).build();
    RateLimiter b = Sluice.builder().store(roomy).rules(rule).build();
    List<String> held = List.of("h0", "h1", "h2");
    for (String k : held) {
      assertThat(a.acquire("held", k)).isEqualTo(b.acquire("held", k));
    }
    for (int i = 0; i < 3; i++) {
      a.acquire("filler", "f" + i);
    }
    assertThat(full.size()).isEqualTo(6);
    assertThat(a.acquire("held", "new").items().get(0).reason()).isEqualTo(DenyReason.STORE_FULL);

    Random random = new Random(7);
    for (int step = 0; step < 300; step++) {
      String key = held.get(random.nextInt(held.size()));
      long cost = random.nextInt(3);
      Decision x = a.acquire(Request.of("held", key, cost));
      Decision y = b.acquire(Request.of("held", key, cost));
      assertThat(x).as("step %d", step).isEqualTo(y);
      long advance = random.nextInt(400);
      ticker.advanceMillis(advance);
      roomyTicker.advanceMillis(advance);
    }
  }

  @Test
  void anExactLogThatCannotGrowIsDeniedStoreFullUntilItsOldUnitsLeave() {
    Rule log = Rule.builder("log").window(100, Duration.ofMinutes(1)).build();
    long oneKey = MemoryStore.keyBytes("k") + AlgorithmTable.of(log.algorithm()).newStateBytes(log, log.windows());
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxBytes(oneKey).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(log).build();
    for (int i = 0; i < 8; i++) {
      assertThat(limiter.acquire("log", "k").allowed()).isTrue();
    }
    ticker.advanceMillis(1000);
    Decision d = limiter.acquire("log", "k");
    ItemDecision item = d.items().get(0);
    assertThat(item.reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(item.windows()).containsExactly(new WindowState(100, 60_000, 92, 59_000, 59_000, true));
    assertThat(store.bytes()).isEqualTo(oneKey);

    ticker.advanceMillis(58_999);
    assertThat(limiter.acquire("log", "k").allowed()).isFalse();
    ticker.advanceMillis(1);
    Decision later = limiter.acquire("log", "k");
    assertThat(later.allowed()).as("the log overwrites units that left the window").isTrue();
    assertThat(later.items().get(0).windows().get(0).remaining()).isEqualTo(99);
    assertThat(store.bytes()).isEqualTo(oneKey);
  }

  @Test
  void aKeyLargerThanARuleCouldEverHoldIsNeverAdmitted() {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxBytes(1000).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(export, token).build();
    Decision d = limiter.acquire("reports.export", "x".repeat(512));
    assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(d.retryAfterMs()).isEqualTo(WindowState.NEVER);
  }

  @Test
  void theByteBudgetBindsBeforeTheKeyCapForLongKeys() {
    long shortKey = MemoryStore.keyBytes("s:0")
        + AlgorithmTable.of(export.algorithm()).newStateBytes(export, export.windows());
    long longKey = MemoryStore.keyBytes("l".repeat(512))
        + AlgorithmTable.of(export.algorithm()).newStateBytes(export, export.windows());
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxBytes(10 * longKey).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(export).build();
    int admitted = 0;
    for (int i = 0; i < 100; i++) {
      String key = String.format("%03d", i) + "l".repeat(509);
      admitted += limiter.acquire("reports.export", key).allowed() ? 1 : 0;
    }
    assertThat(admitted).isEqualTo(10);
    assertThat(store.bytes()).isEqualTo(10 * longKey);
    assertThat(shortKey).isLessThan(longKey / 2);
  }

  /** Two new keys of one request, room for one: one is denied, and the request ends. */
  @Test
  void aRequestForTwoNewKeysInAStoreWithRoomForOneIsDeniedNotStuck() {
    MemoryStore store = MemoryStore.builder().ticker(ticker).maxKeys(1).build();
    RateLimiter limiter = Sluice.builder().store(store).rules(export).build();
    Decision d = assertTimeoutPreemptively(Duration.ofSeconds(10),
        () -> limiter.acquire(Request.of(Item.of("reports.export", "x"), Item.of("reports.export", "y"))));
    assertThat(d.allowed()).isFalse();
    assertThat(d.items()).extracting(ItemDecision::reason).contains(DenyReason.STORE_FULL);
    assertThat(d.retryAfterMs()).isPositive();
    assertThat(store.size()).isEqualTo(1);
    assertThat(limiter.acquire("reports.export", "x").allowed() || limiter.acquire("reports.export", "y").allowed())
        .as("the key held is decided").isTrue();
  }
}
