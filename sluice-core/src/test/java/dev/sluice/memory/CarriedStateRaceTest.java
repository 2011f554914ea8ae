package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.conformance.Threads;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A decision on windows other than those a key's state counts by decides on a carried copy of the
 * state and, if it admits, stores the copy in the state's place. Deciders that find the copy lock
 * the copy, not the state it replaced, so the copy must hold the admission before they can find
 * it: two decisions racing for the one unit left must never both be admitted.
 */
class CarriedStateRaceTest {
  private static final long NOW = 1_000_000;

  private static boolean admitted(MemoryStore store, Rule rule, String key, List<Window> windows) {
    return store.decideSync(new Batch(List.of(new ResolvedItem(rule, key, 1, windows)), NOW)).get(0).allowed();
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_LOG", "TOKEN_BUCKET"})
  void twoDecisionsRacingOnACarriedStateAdmitOnlyTheUnitLeft(Algorithm algorithm) throws InterruptedException {
    Rule rule = Rule.builder("r").algorithm(algorithm).window(5, Duration.ofMinutes(1)).build();
    // The same period with a lower limit: the unit consumed under the rule's own window is carried,
    // and one unit is left.
    List<Window> lowered = List.of(Window.of(2, Duration.ofMinutes(1)));
    MemoryStore store = MemoryStore.builder().ticker(new FakeTicker(NOW)).automaticSweeps(false).build();
    int trials = 20_000;
    AtomicIntegerArray admissions = new AtomicIntegerArray(trials);
    CyclicBarrier start = new CyclicBarrier(2);
    Threads.runAll(2, Duration.ofSeconds(120), thread -> {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int t = 0; t < trials; t++) {
        String key = "k" + t;
        if (thread == 0) {
          assertThat(admitted(store, rule, key, rule.windows())).isTrue();
        }
        start.await();
        // A varying head start, so that the second decision lands at every point of the first.
        for (int spin = random.nextInt(64); spin > 0; spin--) {
          Thread.onSpinWait();
        }
        if (admitted(store, rule, key, lowered)) {
          admissions.incrementAndGet(t);
        }
      }
    });
    List<Integer> wrong = new ArrayList<>();
    for (int t = 0; t < trials; t++) {
      if (admissions.get(t) != 1) {
        wrong.add(t);
      }
    }
    assertThat(wrong).as("trials where the two decisions did not admit exactly one unit").isEmpty();
  }
}
