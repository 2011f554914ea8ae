package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.spi.Grants;
import dev.sluice.spi.Grants.Grant;
import dev.sluice.spi.ResolvedItem;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * Leased mode's store capability, the same on every store: takes grant what fits and commit it,
 * give-backs make room again as far as the windows still count the units. Times are explicit (the
 * memory store's fake ticker, the Redis store's explicit script time).
 */
abstract class GrantsContract {
  static final long T0 = 1_800_000_000_000_000L;
  private static final long SECOND = 1_000_000L;

  /** The store's grants. */
  abstract Grants grants();

  /** A take on the store's clock set to {@code at}. */
  abstract Grant take(ResolvedItem item, long units, long at);

  /** A decision of {@code item} alone at {@code at}. */
  abstract ItemDecision decide(ResolvedItem item, long at);

  final void giveBack(ResolvedItem item, Grant grant, long units) {
    grants().giveBack(item, grant, units).toCompletableFuture().join();
  }

  static String unique(String stem) {
    return stem + "." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  }

  /** 10 units per 10 s: a token bucket's unit refills in 1 s, a sliding window has 10 sub-buckets. */
  static ResolvedItem item(Algorithm a, long cost) {
    Rule rule = Rule.builder(unique("grants." + a.configName())).algorithm(a).window(10, Duration.ofSeconds(10))
        .build();
    return new ResolvedItem(rule, "k", cost, rule.windows());
  }

  static ResolvedItem cost(ResolvedItem item, long cost) {
    return new ResolvedItem(item.rule(), item.key(), cost, item.windows());
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aTakeGrantsWhatFitsAndCommitsIt(Algorithm a) {
    ResolvedItem it = item(a, 1);
    assertThat(decide(cost(it, 7), T0).allowed()).isTrue();
    Grant g = take(it, 5, T0 + 1000);
    assertThat(g.units()).isEqualTo(3);
    assertThat(g.atMicros()).isEqualTo(T0 + 1000);
    assertThat(g.report().allowed()).isTrue();
    assertThat(g.report().cost()).isEqualTo(3);
    assertThat(g.report().windows().get(0).remaining()).isZero();
    assertThat(g.undo()).isNotNull();
    // Nothing is left: the next take grants none and reports one unit denied, and so does a decision.
    Grant none = take(it, 5, T0 + 2000);
    assertThat(none.units()).isZero();
    assertThat(none.undo()).isNull();
    assertThat(none.report().allowed()).isFalse();
    assertThat(none.report().cost()).isEqualTo(1);
    assertThat(decide(it, T0 + 3000).allowed()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aGiveBackMakesRoomAgain(Algorithm a) {
    ResolvedItem it = item(a, 1);
    Grant g = take(it, 10, T0);
    assertThat(g.units()).isEqualTo(10);
    assertThat(decide(it, T0 + 1000).allowed()).as("denied before the give-back").isFalse();
    giveBack(it, g, 4);
    assertThat(decide(cost(it, 4), T0 + 2000).allowed()).as("admitted after it").isTrue();
    assertThat(decide(it, T0 + 3000).allowed()).as("no more than was given back").isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aGiveBackAfterTheWindowForgotTheUnitsFreesNothingTwice(Algorithm a) {
    ResolvedItem it = item(a, 1);
    Grant g = take(it, 10, T0);
    // 12 s on, every algorithm has forgotten the grant: its 10 units are admitted again.
    long later = T0 + 12 * SECOND;
    assertThat(decide(cost(it, 10), later).allowed()).isTrue();
    giveBack(it, g, 10);
    assertThat(decide(it, later + 1000).allowed()).as("the give-back freed the later units").isFalse();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aGiveBackAfterTheGrantDrainedNeverTakesRoomAway(Algorithm a) {
    ResolvedItem it = item(a, 1);
    Grant g = take(it, 10, T0);
    long later = T0 + 12 * SECOND;
    assertThat(decide(it, later).allowed()).isTrue();
    giveBack(it, g, 10);
    // One unit is used: nine are left, whatever was given back.
    assertThat(decide(cost(it, 9), later + 1000).allowed()).isTrue();
  }

  @Test
  void aFixedWindowGrantEndsWithItsWindow() {
    ResolvedItem it = item(Algorithm.FIXED_WINDOW, 1);
    long start = Math.floorDiv(T0, 10 * SECOND) * 10 * SECOND;
    Grant g = take(it, 6, start + 9 * SECOND);
    assertThat(g.units()).isEqualTo(6);
    // The next window: the grant's units are no longer counted, and giving them back frees nothing there.
    long next = start + 10 * SECOND;
    assertThat(decide(cost(it, 10), next).allowed()).isTrue();
    giveBack(it, g, 6);
    assertThat(decide(it, next + 1000).allowed()).isFalse();
  }

  @Test
  void aSlidingLogGiveBackOfPartOfATakeThatOverwroteAFullLogPutsBackNoMore() {
    ResolvedItem it = item(Algorithm.SLIDING_LOG, 1);
    // Eight units fill the log's first ring; 11 s later they have left the window, and the take
    // overwrites five of them.
    assertThat(decide(cost(it, 8), T0).allowed()).isTrue();
    long later = T0 + 11 * SECOND;
    Grant g = take(it, 5, later);
    assertThat(g.units()).isEqualTo(5);
    giveBack(it, g, 1);
    // Four units of the take are held: six are left, and no more.
    for (int i = 1; i <= 6; i++) {
      assertThat(decide(it, later + i).allowed()).as("unit %d", i).isTrue();
    }
    assertThat(decide(it, later + 7).allowed()).isFalse();
    assertThat(decide(cost(it, 0), later + 8).windows().get(0).remaining()).isZero();
  }

  @Test
  void aSlidingLogGiveBackBehindMoreThan64LaterUnitsPerUnitIsSkipped() {
    Rule rule = Rule.builder(unique("grants.long")).algorithm(Algorithm.SLIDING_LOG)
        .window(200, Duration.ofSeconds(10)).build();
    for (int later : new int[] {64, 65}) {
      ResolvedItem it = new ResolvedItem(rule, "k" + later, 1, rule.windows());
      Grant g = take(it, 1, T0);
      assertThat(decide(cost(it, later), T0 + 1).allowed()).isTrue();
      giveBack(it, g, 1);
      long held = later + (later <= 64 ? 0 : 1);
      assertThat(decide(cost(it, 0), T0 + 2).windows().get(0).remaining()).as("%d later units", later)
          .isEqualTo(200 - held);
    }
  }

  @Test
  void aLeakyBucketIsNotLeased() {
    ResolvedItem it = item(Algorithm.LEAKY_BUCKET, 1);
    assertThatThrownBy(() -> grants().take(it, 3).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalArgumentException.class)
        .cause().hasMessageContaining(it.rule().name()).hasMessageContaining("leaky_bucket");
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void unitsThatAreNotPositiveAreRefused(Algorithm a) {
    ResolvedItem it = item(a, 1);
    for (long units : new long[] {0, -3}) {
      assertThatThrownBy(() -> grants().take(it, units).toCompletableFuture().join())
          .hasCauseInstanceOf(IllegalArgumentException.class).cause().hasMessageContaining(it.rule().name())
          .hasMessageContaining("positive");
    }
    Grant g = take(it, 2, T0);
    for (long units : new long[] {0, 3}) {
      assertThatThrownBy(() -> grants().giveBack(it, g, units).toCompletableFuture().join())
          .hasCauseInstanceOf(IllegalArgumentException.class).cause().hasMessageContaining(it.rule().name());
    }
  }
}
