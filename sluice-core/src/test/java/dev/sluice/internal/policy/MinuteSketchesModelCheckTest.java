package dev.sluice.internal.policy;

import dev.sluice.testing.ModelChecks;
import java.util.Map;
import java.util.TreeMap;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link MinuteSketches}' fronts, checked by Lincheck's model checker: threads that share one
 * front add to its run without a lock, change its key under the lock, and race drains that empty
 * it, under many interleavings; every outcome must be one that some sequential order of the same
 * records and drains gives. Each scenario ends with a drain after all threads, so a denial lost
 * or counted twice, or left in a front, shows in its counts. Counts are exact here (two keys, far
 * fewer than a sketch's k).
 *
 * <p>The interleavings that matter are an add that read the front's key and count, then lost the
 * front to a drain or to another key before its compare-and-swap: it must land nowhere, and take
 * the lock. A front emptied without changing its generation lets such an add count a denial of
 * one key for another: that variant fails this check (in the second scenario: a drain of
 * {@code {a=2, b=2}} after three denials of a and one of b).
 *
 * <p>The model checker assumes sequentially consistent memory: the orderings the front relies on
 * (its key and minute written before the count that opens it, read after it) are in
 * {@link MinuteSketches}' comments. Tagged to run in a JVM of its own (see {@code sluice-core/pom.xml}).
 */
@Tag("model-check")
class MinuteSketchesModelCheckTest {
  static final long NOW = 1_800_000_000_000_000L;

  private static final String[][][] SCENARIOS = {
    // runs of one key racing a drain that empties the front
    {{"recordA", "recordA"}, {"recordA", "drain"}},
    // a lock-free add racing another key's run taking the front
    {{"recordA", "recordA"}, {"recordB", "recordA"}},
    // three threads: adds, a change of key, a drain
    {{"recordA", "recordA"}, {"recordB"}, {"drain"}},
    // a drain between two adds of one thread, another key meanwhile
    {{"recordA", "drain", "recordA"}, {"recordA", "recordB"}},
  };

  private static final int INVOCATIONS = 300;

  @Test
  void recordsAndDrainsThroughOneFrontAreLinearizable() {
    ModelCheckingOptions options = new ModelCheckingOptions()
        .iterations(0)
        .invocationsPerIteration(INVOCATIONS)
        .loopBound(200) // a drain walks a rule's 60 minutes: not a hung loop
        .sequentialSpecification(OneFront.class);
    // Each scenario ends with a drain, which shows what the threads left in the front.
    ModelChecks.withScenarios(options, OneFront.class, SCENARIOS, "drain").check(OneFront.class);
  }

  /** Sketches with one front per rule, so every thread records through the same one. */
  public static class OneFront {
    private final MinuteSketches sketches = new MinuteSketches(16, 4, 1);

    @Operation
    public void recordA() {
      sketches.record("r", "a", 1, NOW);
    }

    @Operation
    public void recordB() {
      sketches.record("r", "b", 1, NOW);
    }

    /** What a drain handed out, as key=count (with error, which is zero here) in key order. */
    @Operation
    public String drain() {
      Map<String, String> counts = new TreeMap<>();
      for (MinuteSketches.Drained d : sketches.drain()) {
        for (DenialSketch.Entry e : d.sketch().top(16)) {
          counts.merge(e.key(), e.count() + "±" + e.error(), (x, y) -> x + "+" + y);
        }
      }
      return counts.toString();
    }
  }
}
