package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.conformance.CarryOracle;
import dev.sluice.conformance.Oracles.Expected;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Random decisions on one key whose windows change at random between them: the memory store
 * decides every one exactly as {@link CarryOracle}, every number of the report.
 */
class MemoryWindowChangeProperties {
  private static final long T0 = 1_700_000_000_000_000L;

  /** The clock moves (an explicit time may go back a little), then {@code cost} is asked for under window set {@code set}. */
  record Step(long advanceMicros, long cost, int set) {}

  @Provide
  Arbitrary<List<List<Window>>> sets() {
    Arbitrary<Window> w = Combinators.combine(Arbitraries.longs().between(1, 8),
        Arbitraries.of(1_000L, 2_000L, 3_000L, 10_000L, 60_000L))
        .as((limit, millis) -> Window.of(limit, Duration.ofMillis(millis)));
    return w.list().ofMinSize(1).ofMaxSize(3).uniqueElements(Window::period).list().ofMinSize(2).ofMaxSize(4);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    return Combinators.combine(Arbitraries.longs().between(-50_000, 2_500_000), Arbitraries.longs().between(0, 4),
        Arbitraries.integers().between(0, 3)).as(Step::new).list().ofMinSize(1).ofMaxSize(80);
  }

  /** A live limit's usual moves: the rule's windows lowered, raised, restored, one dropped. */
  @Provide
  Arbitrary<List<List<Window>>> moves() {
    return Combinators.combine(Arbitraries.longs().between(2, 8), Arbitraries.longs().between(2, 20),
        Arbitraries.longs().between(1, 7), Arbitraries.longs().between(1, 12))
        .as((minute, hour, lower, raise) -> {
          Window m = Window.of(minute, Duration.ofSeconds(10));
          Window h = Window.of(Math.max(hour, minute), Duration.ofSeconds(60));
          List<Window> base = List.of(m, h);
          return List.of(base, List.of(Window.of(Math.max(1, minute - lower), m.period()), h),
              List.of(Window.of(minute + raise, m.period()), h), List.of(Window.of(Math.max(1, minute - lower), m.period())),
              base);
        });
  }

  @Provide
  Arbitrary<List<Step>> shortSteps() {
    return Combinators.combine(Arbitraries.longs().between(-50_000, 4_000_000), Arbitraries.longs().between(0, 3),
        Arbitraries.integers().between(0, 4)).as(Step::new).list().ofMinSize(1).ofMaxSize(60);
  }

  /**
   * The rule's windows lowered below what the key consumed, raised, restored, and one of them
   * dropped and given back, with peeks, denials and admissions in between, on every algorithm:
   * every number of every decision is the oracle's, so what the key consumed before a change is
   * there again when its windows come back.
   */
  @Property(tries = 400)
  void aLimitLoweredRaisedAndRestoredDecidesAsTheOracle(@ForAll Algorithm algorithm,
      @ForAll("moves") List<List<Window>> sets, @ForAll("shortSteps") List<Step> steps) {
    theMemoryStoreDecidesAsTheOracleWhileTheKeysWindowsChange(algorithm, sets, steps, 3);
  }

  @Property(tries = 400)
  void theMemoryStoreDecidesAsTheOracleWhileTheKeysWindowsChange(@ForAll Algorithm algorithm,
      @ForAll("sets") List<List<Window>> sets, @ForAll("steps") List<Step> steps,
      @ForAll @IntRange(min = 1, max = 6) int precision) {
    Rule rule = Rule.builder("r").algorithm(algorithm).windows(sets.get(0)).precision(precision).build();
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    CarryOracle oracle = new CarryOracle(rule, sets.get(0));
    long now = T0;
    int i = 0;
    for (Step s : steps) {
      now += s.advanceMicros();
      List<Window> ws = sets.get(s.set() % sets.size());
      oracle.windows(ws);
      ItemDecision d = store.decideSync(new Batch(List.of(new ResolvedItem(rule, "k", s.cost(), ws)), now)).get(0);
      assertThat(Expected.of(d)).as("step %d at %d µs, cost %d, windows %s", i++, now - T0, s.cost(), ws)
          .isEqualTo(oracle.decide(now, s.cost()));
    }
    assertThat(store.recount()).containsExactly(1, store.bytes());
  }
}
