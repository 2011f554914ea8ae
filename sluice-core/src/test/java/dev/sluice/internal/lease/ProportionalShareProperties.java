package dev.sluice.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.internal.lease.ProportionalShare.KeyView;
import dev.sluice.internal.lease.ProportionalShare.Usage;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The leader's sizes: the budget never passed, safe transitions, proportion once settled, learning. */
class ProportionalShareProperties {

  /** A key as a leader may see it; with {@code consistent}, Σ max(published, in use) ≤ B as the invariant keeps it. */
  static KeyView view(Random r, boolean consistent) {
    long budget = r.nextInt(4) == 0 ? r.nextInt(5) : r.nextInt(2_000);
    int n = 1 + r.nextInt(8);
    Map<String, Usage> reported = new HashMap<>();
    Map<String, Long> published = new HashMap<>();
    long left = budget;
    for (int i = 0; i < n; i++) {
      String id = "i" + i;
      long claim = consistent ? (left == 0 ? 0 : r.nextLong(left + 1) / (r.nextBoolean() ? 1 : n))
          : r.nextInt(3_000);
      left -= consistent ? claim : 0;
      long inUse = r.nextBoolean() ? claim : r.nextLong(claim + 1);
      long pub = inUse == claim ? r.nextLong(claim + 1) : claim;
      if (r.nextInt(5) != 0) {
        double demand = r.nextInt(6) == 0 ? 0 : r.nextInt(10) == 0 ? r.nextDouble() : r.nextInt(5_000) * r.nextDouble();
        reported.put(id, new Usage(demand, inUse));
      }
      if (pub > 0 || r.nextBoolean()) {
        published.put(id, pub);
      }
    }
    return new KeyView(budget, reported, published);
  }

  static long sum(Map<String, Long> sizes) {
    return sizes.values().stream().mapToLong(Long::longValue).sum();
  }

  @Property(tries = 2_000)
  void theSizesNeverSumAboveTheBudget(@ForAll long seed, @ForAll boolean consistent) {
    KeyView v = view(new Random(seed), consistent);
    Map<String, Long> sizes = ProportionalShare.sizes(v, false);
    assertThat(sum(sizes)).isLessThanOrEqualTo(v.budget());
    assertThat(sizes.values()).allSatisfy(s -> assertThat(s).isNotNegative());
    if (consistent) {
      assertThat(sum(ProportionalShare.sizes(v, true))).isLessThanOrEqualTo(v.budget());
    }
  }

  /** What every instance may hold after a transition, before or after adopting it, stays within B. */
  @Property(tries = 2_000)
  void aTransitionNeverLetsTheClaimsPassTheBudget(@ForAll long seed) {
    KeyView v = view(new Random(seed), true);
    Map<String, Long> sizes = ProportionalShare.sizes(v, false);
    long claims = 0;
    long adopted = 0;
    for (Map.Entry<String, Long> e : sizes.entrySet()) {
      Usage u = v.reported().get(e.getKey());
      long inUse = u == null ? 0 : u.inUse();
      claims += Math.max(e.getValue(), Math.max(inUse, v.published().getOrDefault(e.getKey(), 0L)));
      adopted += Math.max(e.getValue(), inUse);
    }
    assertThat(claims).isLessThanOrEqualTo(v.budget());
    assertThat(adopted).isLessThanOrEqualTo(v.budget());
    // A shrink is published at once: no one ends above its target.
    Map<String, Long> target = ProportionalShare.target(v.budget(), v.reported());
    sizes.forEach((id, s) -> assertThat(s).isLessThanOrEqualTo(target.getOrDefault(id, 0L)));
  }

  /**
   * With demand held, instances adopting each size at their next report: within three intervals
   * the sizes are the floors plus the proportional rest, each within one unit of its exact share.
   */
  @Property(tries = 1_000)
  void settledSizesAreProportionalToDemandWithinOneUnit(@ForAll long seed) {
    Random r = new Random(seed);
    KeyView v = view(r, true);
    for (int round = 0; round < 3; round++) {
      Map<String, Long> sizes = ProportionalShare.sizes(v, false);
      Map<String, Usage> adopted = new HashMap<>();
      v.reported().forEach((id, u) -> adopted.put(id, new Usage(u.demand(), sizes.get(id))));
      Map<String, Long> published = new HashMap<>(sizes);
      published.values().removeIf(s -> s == 0);
      v = new KeyView(v.budget(), adopted, published);
    }
    Map<String, Long> settled = ProportionalShare.sizes(v, false);
    Map<String, Long> target = ProportionalShare.target(v.budget(), v.reported());
    settled.forEach((id, s) -> assertThat(s).as(id).isEqualTo(target.getOrDefault(id, 0L)));
    double total = 0;
    int hot = 0;
    for (Usage u : v.reported().values()) {
      total += u.demand();
      hot += u.demand() > 0 ? 1 : 0;
    }
    if (hot == 0 || v.budget() < hot) {
      return;
    }
    assertThat(sum(settled)).isEqualTo(v.budget());
    for (Map.Entry<String, Usage> e : v.reported().entrySet()) {
      if (e.getValue().demand() > 0) {
        double exact = 1 + (v.budget() - hot) * e.getValue().demand() / total;
        assertThat((double) settled.get(e.getKey())).as(e.getKey()).isCloseTo(exact, org.assertj.core.data.Offset.offset(1.0));
      }
    }
  }

  @Property(tries = 1_000)
  void theLearningPeriodGrowsNoOne(@ForAll long seed) {
    KeyView v = view(new Random(seed), false);
    Map<String, Long> sizes = ProportionalShare.sizes(v, true);
    sizes.forEach((id, s) -> {
      Usage u = v.reported().get(id);
      assertThat(s).as(id).isEqualTo(u == null ? 0 : u.inUse());
    });
    assertThat(sizes.keySet()).containsAll(v.reported().keySet()).containsAll(v.published().keySet());
  }

  @Property(tries = 1_000)
  void anInstanceThatDidNotReportOrHasNoDemandGetsNothing(@ForAll long seed) {
    KeyView v = view(new Random(seed), false);
    Map<String, Long> sizes = ProportionalShare.sizes(v, false);
    sizes.forEach((id, s) -> {
      Usage u = v.reported().get(id);
      if (u == null || u.demand() == 0) {
        assertThat(s).as(id).isZero();
      }
    });
  }

  @Property
  void theEvenShareLeavesRoomForOneMore(@ForAll @IntRange(max = 100_000) int budget,
      @ForAll @IntRange(max = 50) int instances, @ForAll @IntRange(max = 100_000) int last) {
    long even = budget / (instances + 1);
    assertThat(ProportionalShare.evenShare(last, budget, instances, false)).isEqualTo(Math.min(last, even));
    assertThat(ProportionalShare.evenShare(last, budget, instances, true)).isEqualTo(even);
    assertThat(even * (instances + 1)).isLessThanOrEqualTo(budget);
  }

  @Example
  void equalDemandSplitsTenUnitsTwoTwoThreeThree() {
    Map<String, Usage> r = Map.of("a", new Usage(500, 0), "b", new Usage(500, 0), "c", new Usage(500, 0),
        "d", new Usage(500, 0));
    assertThat(ProportionalShare.target(10, r)).containsOnly(Map.entry("a", 3L), Map.entry("b", 3L),
        Map.entry("c", 2L), Map.entry("d", 2L));
  }

  @Example
  void aSkewToEightyPercentGivesSixTwoOneOne() {
    Map<String, Usage> r = Map.of("a", new Usage(1_600, 0), "b", new Usage(133, 0), "c", new Usage(133, 0),
        "d", new Usage(133, 0));
    assertThat(ProportionalShare.target(10, r)).containsOnly(Map.entry("a", 6L), Map.entry("b", 2L),
        Map.entry("c", 1L), Map.entry("d", 1L));
  }

  @Example
  void whenTheBudgetCannotFloorEveryoneTheColdestGetNothing() {
    Map<String, Usage> r = Map.of("a", new Usage(5, 0), "b", new Usage(9, 0), "c", new Usage(1, 0));
    assertThat(ProportionalShare.target(2, r)).containsOnly(Map.entry("a", 1L), Map.entry("b", 1L));
  }

  /** A grower waits for the shrinker to give back: growth lands an interval later. */
  @Example
  void growthWaitsForUnitsFreeNow() {
    KeyView v = new KeyView(10, Map.of("a", new Usage(100, 8), "b", new Usage(100, 2)),
        Map.of("a", 8L, "b", 2L));
    assertThat(ProportionalShare.sizes(v, false)).containsOnly(Map.entry("a", 5L), Map.entry("b", 2L));
    KeyView adopted = new KeyView(10, Map.of("a", new Usage(100, 5), "b", new Usage(100, 2)),
        Map.of("a", 5L, "b", 2L));
    assertThat(ProportionalShare.sizes(adopted, false)).containsOnly(Map.entry("a", 5L), Map.entry("b", 5L));
  }

  @Example
  void badInputIsRefusedNamingIt() {
    assertThatThrownBy(() -> new Usage(-1, 0)).hasMessageContaining("demand must be a finite number >= 0, was -1.0");
    assertThatThrownBy(() -> new KeyView(-3, Map.of(), Map.of())).hasMessageContaining("budget must be >= 0, was -3");
  }
}
