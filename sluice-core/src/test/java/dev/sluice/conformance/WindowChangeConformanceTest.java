package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A key given other windows within one rule definition (a live limit) keeps what it consumed:
 * windows are matched by period, a kept period keeps its consumption, a new one starts empty
 * (but for the sliding log, whose one log counts for every window), a dropped one is forgotten.
 */
public abstract class WindowChangeConformanceTest extends StoreConformance {
  private static final Duration MINUTE = Duration.ofSeconds(60);

  @BeforeEach
  void storeDecidesTheWindowsItIsGiven() {
    Assumptions.assumeTrue(decidesGivenWindows(), "the store decides by a server's own windows for each key, "
        + "not by the windows it is given: the server's store passes this suite itself");
  }

  private static List<Window> windows(Window... ws) {
    return List.of(ws);
  }

  private static Window perMinute(long limit) {
    return Window.of(limit, MINUTE);
  }

  /** One item of {@code rule} for {@code key} with {@code ws}, decided at {@code ms} after the base. */
  private ItemDecision decide(Rule rule, String key, List<Window> ws, long ms, long cost) {
    Batch b = new Batch(List.of(new ResolvedItem(rule, key, cost, ws)), (BASE_MS + ms) * 1000);
    return store().decideSync(b).get(0);
  }

  private static long remaining(ItemDecision d, int window) {
    return d.windows().get(window).remaining();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aKeyAtFourOfFiveMovedToTenPerMinuteHasSixLeftAndBackToFiveHasOne(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("carry").algorithm(algorithm).window(5, MINUTE).build();
    for (int i = 0; i < 4; i++) {
      assertThat(decide(rule, "k", rule.windows(), 1000, 1).allowed()).isTrue();
    }
    ItemDecision moved = decide(rule, "k", windows(perMinute(10)), 2000, 0);
    assertThat(remaining(moved, 0)).isEqualTo(6);
    assertThat(moved.windows().get(0).limit()).isEqualTo(10);

    ItemDecision back = decide(rule, "k", rule.windows(), 3000, 0);
    assertThat(remaining(back, 0)).isEqualTo(1);
    assertThat(decide(rule, "k", rule.windows(), 3000, 1).allowed()).isTrue();
    assertThat(decide(rule, "k", rule.windows(), 3000, 1).allowed()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aKeyThatConsumedMoreUnderTheLargerLimitHasNothingLeftBackUnderTheSmallerOne(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("carry.more").algorithm(algorithm).window(5, MINUTE).build();
    for (int i = 0; i < 4; i++) {
      decide(rule, "k", rule.windows(), 1000, 1);
    }
    List<Window> ten = windows(perMinute(10));
    for (int i = 0; i < 3; i++) {
      assertThat(decide(rule, "k", ten, 2000, 1).allowed()).isTrue();
    }
    assertThat(remaining(decide(rule, "k", ten, 2000, 0), 0)).isEqualTo(3);
    ItemDecision back = decide(rule, "k", rule.windows(), 3000, 1);
    assertThat(back.allowed()).isFalse();
    assertThat(remaining(back, 0)).isZero();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void twoWindowsMovedToAnotherSetKeepOnlyTheSharedPeriod(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("carry.set").algorithm(algorithm).window(3, Duration.ofSeconds(1)).window(10, MINUTE)
        .maxWait(Duration.ofMinutes(10)).build();
    decide(rule, "k", rule.windows(), 0, 1);
    decide(rule, "k", rule.windows(), 0, 1);
    List<Window> next = windows(perMinute(20), Window.of(100, Duration.ofHours(1)));
    ItemDecision d = decide(rule, "k", next, 500, 0);
    assertThat(d.windows()).extracting(w -> w.limit()).containsExactly(20L, 100L);
    if (algorithm == Algorithm.LEAKY_BUCKET) {
      // The minute's queue of 2 slots of 3 s (20/min) less the 0.5 s since; the hour's is new.
      assertThat(d.windows().get(0).resetAfterMs()).isEqualTo(5500);
      assertThat(d.windows().get(1).resetAfterMs()).isZero();
      return;
    }
    assertThat(remaining(d, 0)).isEqualTo(18);
    // The sliding log's one log counts its units in every window, the new hour's too.
    assertThat(remaining(d, 1)).isEqualTo(algorithm == Algorithm.SLIDING_LOG ? 98 : 100);
  }

  @Test
  void aTokenBucketKeepsItsBacklogInWholeUnitsRescaledToTheNewRate() {
    assumeSupported(Algorithm.TOKEN_BUCKET);
    Rule rule = rule("carry.gcra").algorithm(Algorithm.TOKEN_BUCKET).window(4, MINUTE).build();
    for (int i = 0; i < 3; i++) {
      decide(rule, "k", rule.windows(), 0, 1); // T = 15 s: TAT 45 s
    }
    decide(rule, "k", rule.windows(), 10_000, 0); // latest time 10 s: 35 s of backlog, 3 units (2⅓ rounded up)
    // 6/min, T = 10 s: 3 units are 30 s from 10 s, so 20 s at 20 s: 2 units.
    ItemDecision d = decide(rule, "k", windows(perMinute(6)), 20_000, 0);
    assertThat(remaining(d, 0)).isEqualTo(4);
    assertThat(d.windows().get(0).resetAfterMs()).isEqualTo(20_000);
  }

  @Test
  void aTokenBucketBacklogBeyondTheNewLimitIsKeptWhole() {
    assumeSupported(Algorithm.TOKEN_BUCKET);
    Rule rule = rule("carry.whole").algorithm(Algorithm.TOKEN_BUCKET).window(10, MINUTE).build();
    for (int i = 0; i < 8; i++) {
      decide(rule, "k", rule.windows(), 0, 1);
    }
    ItemDecision d = decide(rule, "k", windows(perMinute(5)), 0, 1);
    assertThat(d.allowed()).isFalse();
    assertThat(remaining(d, 0)).isZero();
    // 8 units of 12 s, 96 s: a unit fits once 4 of them have come back.
    assertThat(d.windows().get(0).resetAfterMs()).isEqualTo(96_000);
    assertThat(d.windows().get(0).retryAfterMs()).isEqualTo(48_000);
    assertThat(decide(rule, "k", windows(perMinute(5)), 47_999, 1).allowed()).isFalse();
    assertThat(decide(rule, "k", windows(perMinute(5)), 48_000, 1).allowed()).isTrue();
  }

  /**
   * A limit lowered below what the key consumed and then restored finds every unit again, on
   * every algorithm: decisions under the lower limit that consume nothing (a peek, a denial)
   * leave the key as it was.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aLimitLoweredPeekedAndRestoredKeepsEveryUnit(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("carry.lowered").algorithm(algorithm).window(5, MINUTE).build();
    for (String key : List.of("k", "twin")) {
      for (int i = 0; i < 4; i++) {
        assertThat(decide(rule, key, rule.windows(), 1000, 1).allowed()).isTrue();
      }
    }
    List<Window> three = windows(perMinute(3));
    ItemDecision peek = decide(rule, "k", three, 2000, 0);
    assertThat(remaining(peek, 0)).isZero();
    assertThat(decide(rule, "k", three, 2000, 1).allowed()).isFalse();
    assertThat(decide(rule, "k", three, 2000, 0).windows()).isEqualTo(peek.windows());

    // As the twin that never changed windows, every number.
    ItemDecision back = decide(rule, "k", rule.windows(), 2000, 0);
    assertThat(back.windows()).isEqualTo(decide(rule, "twin", rule.windows(), 2000, 0).windows());
    if (algorithm != Algorithm.LEAKY_BUCKET) {
      assertThat(remaining(back, 0)).isEqualTo(1);
      assertThat(decide(rule, "k", rule.windows(), 2000, 1).allowed()).isTrue();
      assertThat(decide(rule, "k", rule.windows(), 2000, 1).allowed()).isFalse();
    } else {
      // Four slots of 12 s queued from 1 s: the next request waits 47 s.
      assertThat(decide(rule, "k", rule.windows(), 2000, 1).waitMs()).isEqualTo(47_000);
    }
  }

  @Test
  void aLeakyBucketKeepsItsQueueInSlotsOfTheNewInterval() {
    assumeSupported(Algorithm.LEAKY_BUCKET);
    Rule rule = rule("carry.leaky").algorithm(Algorithm.LEAKY_BUCKET).window(10, MINUTE).build();
    for (int i = 0; i < 4; i++) {
      assertThat(decide(rule, "k", rule.windows(), 0, 1).allowed()).isTrue(); // slots 6 s apart
    }
    // 4 queued slots of 6 s become 4 of 12 s: the next request waits 48 s.
    ItemDecision d = decide(rule, "k", windows(perMinute(5)), 0, 1);
    assertThat(d.allowed()).isTrue();
    assertThat(d.waitMs()).isEqualTo(48_000);
  }

  @Test
  void aKeyOfAStaticOverrideMovedToOtherWindowsAndBackKeepsItsState() {
    Rule rule = rule("carry.override").window(5, MINUTE)
        .override(new KeyOverride(List.of("vip"), List.of(perMinute(10)))).build();
    for (int i = 0; i < 4; i++) {
      decide(rule, "vip", rule.windowsFor("vip"), 0, 1);
    }
    assertThat(remaining(decide(rule, "vip", windows(perMinute(20)), 1000, 0), 0)).isEqualTo(16);
    assertThat(remaining(decide(rule, "vip", rule.windowsFor("vip"), 2000, 1), 0)).isEqualTo(5);
    assertThat(remaining(decide(rule, "vip", windows(perMinute(5)), 3000, 0), 0)).isZero();
  }

  @Test
  void aChangedRuleDefinitionStillStartsAfresh() {
    Rule before = rule("carry.redefined").window(5, MINUTE).build();
    for (int i = 0; i < 4; i++) {
      decide(before, "k", before.windows(), 0, 1);
    }
    Rule after = before.toBuilder().windows(windows(perMinute(10))).build();
    assertThat(remaining(decide(after, "k", after.windows(), 1000, 0), 0)).isEqualTo(10);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void itemsOfOneRequestCarryTheirStateToo(Algorithm algorithm) {
    assumeSupported(algorithm);
    Rule rule = rule("carry.many").algorithm(algorithm).window(5, MINUTE).build();
    Rule other = rule("carry.other").algorithm(algorithm).window(5, MINUTE).build();
    List<ResolvedItem> first = new ArrayList<>();
    for (String key : List.of("a", "b")) {
      first.add(new ResolvedItem(rule, key, 2, rule.windows()));
    }
    first.add(new ResolvedItem(other, "a", 2, other.windows()));
    store().decideSync(new Batch(first, BASE_MS * 1000));
    List<ResolvedItem> moved = new ArrayList<>();
    for (String key : List.of("a", "b")) {
      moved.add(new ResolvedItem(rule, key, 1, windows(perMinute(10))));
    }
    moved.add(new ResolvedItem(other, "a", 1, other.windows()));
    List<ItemDecision> d = store().decideSync(new Batch(moved, BASE_MS * 1000));
    assertThat(d).allMatch(ItemDecision::allowed);
    if (algorithm != Algorithm.LEAKY_BUCKET) {
      assertThat(d).extracting(x -> x.windows().get(0).remaining()).containsExactly(7L, 7L, 2L);
    } else {
      // 2 slots of 6 s (10/min) queued ahead of the new request's start.
      assertThat(d).extracting(ItemDecision::waitMs).containsExactly(12_000L, 12_000L, 24_000L);
    }
  }
}
