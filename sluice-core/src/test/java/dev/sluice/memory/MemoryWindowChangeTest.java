package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.algorithm.AlgorithmTable;
import dev.sluice.conformance.WindowChangeConformanceTest;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryWindowChangeTest extends WindowChangeConformanceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(new FakeTicker()).build();
  }

  private static void decide(MemoryStore store, Rule rule, List<Window> ws, long micros, long cost) {
    store.decideSync(new Batch(List.of(new ResolvedItem(rule, "k", cost, ws)), micros));
  }

  @Test
  void theBytesOfAStateCarriedToOtherWindowsAreCountedAsItsOwn() {
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker()).build();
    Rule rule = Rule.builder("log").algorithm(Algorithm.SLIDING_LOG).window(1000, Duration.ofSeconds(10)).build();
    for (int i = 0; i < 100; i++) {
      decide(store, rule, rule.windows(), 1_000_000, 1);
    }
    long before = store.bytes();
    // A peek under other windows stores nothing; an admission stores the carried state.
    decide(store, rule, List.of(Window.perSeconds(20, 10), Window.perSeconds(5, 1)), 1_000_000, 0);
    assertThat(store.bytes()).isEqualTo(before);
    decide(store, rule, List.of(Window.perSeconds(20, 10), Window.perSeconds(5, 1)), 12_000_000, 1);
    assertThat(store.bytes()).isLessThan(before);
    assertThat(store.recount()).containsExactly(1, store.bytes());
    decide(store, rule, rule.windows(), 12_000_000, 1);
    assertThat(store.recount()).containsExactly(1, store.bytes());
    Rule sw = Rule.builder("sw").algorithm(Algorithm.SLIDING_WINDOW).window(10, Duration.ofSeconds(1)).build();
    decide(store, sw, sw.windows(), 1_000_000, 1);
    decide(store, sw, List.of(Window.perSeconds(10, 1), Window.perSeconds(100, 3600)), 1_000_000, 1);
    assertThat(store.recount()).containsExactly(2, store.bytes());
  }

  @Test
  void aCarriedStateWithoutRoomForItsBytesIsDeniedStoreFullAndTheOldStateStays() {
    Rule rule = Rule.builder("sw").algorithm(Algorithm.SLIDING_WINDOW).window(10, Duration.ofSeconds(1)).build();
    long one = MemoryStore.keyBytes("k") + AlgorithmTable.of(rule.algorithm()).newStateBytes(rule, rule.windows());
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker()).maxBytes(one + 8).build();
    decide(store, rule, rule.windows(), 1_000_000, 3);
    List<Window> more = List.of(Window.perSeconds(10, 1), Window.perSeconds(100, 3600));
    var d = store.decideSync(new Batch(List.of(new ResolvedItem(rule, "k", 1, more)), 1_000_000)).get(0);
    assertThat(d.reason()).isEqualTo(dev.sluice.DenyReason.STORE_FULL);
    assertThat(store.recount()).containsExactly(1, store.bytes());
    var kept = store.decideSync(new Batch(List.of(new ResolvedItem(rule, "k", 0, rule.windows())), 1_000_000)).get(0);
    assertThat(kept.windows().get(0).remaining()).isEqualTo(7);
  }

  @Test
  void aStateReplacedByItsCarriedTwinIsNeverDecidedOnAgain() {
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker()).build();
    Rule rule = Rule.builder("r").algorithm(Algorithm.TOKEN_BUCKET).window(5, Duration.ofSeconds(60)).build();
    decide(store, rule, rule.windows(), 0, 1);
    var old = store.held("r", "k");
    decide(store, rule, List.of(Window.perSeconds(10, 60)), 0, 1);
    assertThat(old.dead).isTrue();
    assertThat(store.held("r", "k")).isNotSameAs(old);
    assertThat(store.held("r", "k").countsBy(List.of(Window.perSeconds(10, 60)))).isTrue();
  }
}
