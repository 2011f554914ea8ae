package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.conformance.Bounds.Admission;
import dev.sluice.conformance.Oracles.Expected;
import dev.sluice.conformance.Oracles.Oracle;
import dev.sluice.conformance.Traces.Step;
import dev.sluice.conformance.Traces.Trace;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.PropertyDefaults;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * SPEC §3 bounds on random traces, and every decision equal to an exact model's ({@link Oracles}):
 * a differential test of any store against the reference semantics. One store serves a whole
 * property; each try runs under a rule name of its own.
 *
 * <p>200 tries per property keep the suite fast on memory; a subclass sets its own with
 * {@code @PropertyDefaults(tries = N)} (fewer for a remote store, more to search harder).
 */
@PropertyDefaults(tries = 200)
public abstract class AlgorithmBoundProperties {
  private static final String KEY = "k";

  private Store store;

  /** A store for one property; closed after it. */
  protected abstract Store newStore();

  @BeforeProperty
  final void openStore() {
    store = newStore();
  }

  @AfterProperty
  final void closeStore() {
    store.close();
  }

  /** What happened at one step: the trace's request and the store's answer. */
  private record Outcome(Step step, Expected answer) {}

  /** Runs the trace through the store, checking every decision against the model. */
  private List<Outcome> replay(Trace trace) {
    String name = "prop." + trace.algorithm().configName() + "."
        + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    Rule rule = trace.rule(name);
    // Not closed: closing a limiter closes its store, which serves the whole property.
    RateLimiter limiter = Sluice.builder().store(store).rules(rule).build();
    Oracle oracle = Oracles.of(rule, KEY);
    List<Outcome> out = new ArrayList<>();
    for (int i = 0; i < trace.steps().size(); i++) {
      Step s = trace.steps().get(i);
      Decision d = limiter.acquire(Request.of(name, KEY, s.cost()).atMicros(s.atMicros()));
      Expected actual = Expected.of(d.items().get(0));
      assertThat(actual).as("step %d (%s)", i, s).isEqualTo(oracle.decide(s.atMicros(), s.cost()));
      assertThat(d.allowed()).isEqualTo(actual.allowed());
      out.add(new Outcome(s, actual));
    }
    return out;
  }

  private static List<Admission> admitted(List<Outcome> outcomes) {
    List<Admission> out = new ArrayList<>();
    for (Outcome o : outcomes) {
      if (o.answer().allowed() && o.step().cost() > 0) {
        long at = o.step().atMicros();
        out.add(new Admission(at, at + o.answer().waitMs() * 1000, o.step().cost()));
      }
    }
    return out;
  }

  @Provide
  Arbitrary<Trace> slidingLog() {
    return Traces.of(Algorithm.SLIDING_LOG);
  }

  @Provide
  Arbitrary<Trace> slidingWindow() {
    return Traces.of(Algorithm.SLIDING_WINDOW);
  }

  @Provide
  Arbitrary<Trace> fixedWindow() {
    return Traces.of(Algorithm.FIXED_WINDOW);
  }

  @Provide
  Arbitrary<Trace> tokenBucket() {
    return Traces.of(Algorithm.TOKEN_BUCKET);
  }

  @Provide
  Arbitrary<Trace> leakyBucket() {
    return Traces.of(Algorithm.LEAKY_BUCKET);
  }

  @Provide
  Arbitrary<Trace> leakyBucketInWholeMillis() {
    return Traces.leakyInWholeMillis();
  }

  /** Exact: admits precisely what a brute-force log admits, so never more than L in any (t−P, t]. */
  @Property
  void slidingLogAdmitsExactlyWhatAnExactLogAdmits(@ForAll("slidingLog") Trace trace) {
    List<Admission> admitted = admitted(replay(trace));
    for (Window w : trace.windows()) {
      Bounds.atMostLimitInEveryPeriod(admitted, w);
    }
  }

  /**
   * Conservative with a stated error. With bucket width w = ⌈P/B⌉ and n = ⌈P/w⌉, an admission at a
   * counts until its bucket leaves, (⌊a/w⌋ + n + 1)·w, which is after a + P and at most
   * X = (n+1)·w − P later (X = w when w divides P, X < 2w always). So a request is denied whenever
   * the exact log over (t − P, t] would deny it, and admitted whenever the exact log over the
   * widened interval (t − P − X, t] would admit it.
   */
  @Property
  void slidingWindowNeverAdmitsMoreThanTheExactLogAndDeniesOnlyWithinOneBucketOfIt(
      @ForAll("slidingWindow") Trace trace) {
    List<Outcome> outcomes = replay(trace);
    List<Admission> admitted = admitted(outcomes);
    for (Window w : trace.windows()) {
      Bounds.atMostLimitInEveryPeriod(admitted, w);
      long extra = Oracles.slidingWindowExtraHold(w, trace.precision());
      long width = Oracles.bucketWidth(w, trace.precision());
      assertThat(extra).isBetween(1L, 2 * width - 1);
      if (w.periodMicros() % width == 0) {
        assertThat(extra).isEqualTo(width);
      }
    }
    List<Admission> before = new ArrayList<>();
    for (Outcome o : outcomes) {
      long t = o.step().atMicros();
      long cost = o.step().cost();
      boolean exactDenies = false;
      boolean widenedAdmits = true;
      for (Window w : trace.windows()) {
        long p = w.periodMicros();
        long widened = p + Oracles.slidingWindowExtraHold(w, trace.precision());
        if (cost > w.limit() || sumSince(before, t - p) + cost > w.limit()) {
          exactDenies = true;
        }
        if (cost > w.limit() || sumSince(before, t - widened) + cost > w.limit()) {
          widenedAdmits = false;
        }
      }
      if (exactDenies) {
        assertThat(o.answer().allowed()).as("%s: the exact log denies it", o.step()).isFalse();
      }
      if (widenedAdmits) {
        assertThat(o.answer().allowed()).as("%s: the exact log over the widened window admits it", o.step())
            .isTrue();
      }
      if (o.answer().allowed() && cost > 0) {
        before.add(Admission.at(t, cost));
      }
    }
  }

  /** Admitted cost at times after {@code floor}. */
  private static long sumSince(List<Admission> admitted, long floor) {
    long sum = 0;
    for (Admission a : admitted) {
      if (a.atMicros() > floor) {
        sum += a.cost();
      }
    }
    return sum;
  }

  @Property
  void fixedWindowAdmitsAtMostTheLimitPerAlignedWindow(@ForAll("fixedWindow") Trace trace) {
    List<Admission> admitted = admitted(replay(trace));
    for (Window w : trace.windows()) {
      Bounds.atMostLimitPerAlignedWindow(admitted, w);
    }
  }

  @Property
  void tokenBucketAdmitsAtMostTheBurstPlusTheRefillInAnySpan(@ForAll("tokenBucket") Trace trace) {
    List<Admission> admitted = admitted(replay(trace));
    for (Window w : trace.windows()) {
      Bounds.atMostLimitPlusRefillInEverySpan(admitted, w);
    }
  }

  @Property
  void leakyBucketDecidesAsTheModelAndNeverWaitsAboveMaxWait(@ForAll("leakyBucket") Trace trace) {
    List<Outcome> outcomes = replay(trace);
    long maxWait = trace.rule("x").maxWait().toNanos() / 1000;
    // waitMs is rounded up to whole milliseconds: allow the rounding, no more.
    for (Outcome o : outcomes) {
      if (o.answer().allowed()) {
        assertThat(o.answer().waitMs() * 1000).as("%s", o.step()).isLessThan(maxWait + 1000);
      }
    }
  }

  @Property
  void leakyBucketStartsAreSpacedByTheEmissionIntervalAndWaitAtMostMaxWait(
      @ForAll("leakyBucketInWholeMillis") Trace trace) {
    List<Admission> admitted = admitted(replay(trace));
    for (Window w : trace.windows()) {
      Bounds.startsSpacedByTheEmissionInterval(admitted, w);
    }
    Bounds.noWaitAbove(admitted, trace.rule("x").maxWait().toNanos() / 1000);
  }
}
