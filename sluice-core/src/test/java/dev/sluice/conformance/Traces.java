package dev.sluice.conformance;

import dev.sluice.Algorithm;
import dev.sluice.Rule;
import dev.sluice.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** Random traces for property tests: one key, 1–5 windows, non-decreasing times, costs 0..L+1. */
public final class Traces {
  private Traces() {}

  /** A request of a trace: an explicit time in microseconds since the epoch and a cost. */
  public record Step(long atMicros, long cost) {
    @Override
    public String toString() {
      return atMicros + ":" + cost;
    }
  }

  /** A rule's definition (named when run) and the requests of one key under it. */
  public record Trace(Algorithm algorithm, List<Window> windows, int precision, Optional<Duration> maxWait,
      List<Step> steps) {

    public Rule rule(String name) {
      Rule.Builder b = Rule.builder(name).algorithm(algorithm).windows(windows).precision(precision);
      maxWait.ifPresent(b::maxWait);
      return b.build();
    }

    @Override
    public String toString() {
      // Times relative to the first step keep a shrunk counterexample readable.
      long t0 = steps.get(0).atMicros();
      return algorithm.configName() + " " + windows.stream().map(w -> w.limit() + "/" + w.periodMicros() + "µs")
          .collect(Collectors.joining(" + "))
          + (algorithm == Algorithm.SLIDING_WINDOW ? " precision " + precision : "")
          + maxWait.map(d -> " max_wait " + d.toNanos() / 1000 + "µs").orElse("")
          + " from t0=" + t0 + "µs: "
          + steps.stream().map(s -> "+" + (s.atMicros() - t0) + ":" + s.cost()).collect(Collectors.joining(" "));
    }
  }

  private static final long BASE_MICROS = StoreConformance.BASE_MS * 1000;

  /** Periods from 1 ms to 3 s in whole microseconds (most not whole milliseconds), limits 1–40. */
  public static Arbitrary<Trace> of(Algorithm algorithm) {
    Arbitrary<Long> limit = Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.longs().between(1, 6)),
        Tuple.of(2, Arbitraries.longs().between(7, 40)));
    Arbitrary<Window> window = Combinators.combine(limit, Arbitraries.longs().between(1_000, 3_000_000))
        .as((l, p) -> new Window(l, Duration.ofNanos(p * 1000)));
    Arbitrary<Integer> precision = algorithm == Algorithm.SLIDING_WINDOW
        ? Arbitraries.integers().between(1, 12)
        : Arbitraries.just(Rule.DEFAULT_PRECISION);
    Arbitrary<Optional<Duration>> maxWait = algorithm == Algorithm.LEAKY_BUCKET
        ? Arbitraries.longs().between(0, 4_000_000).map(us -> Duration.ofNanos(us * 1000)).optional(0.7)
        : Arbitraries.just(Optional.empty());
    return Combinators.combine(window.list().ofMinSize(1).ofMaxSize(5), precision, maxWait)
        .flatAs((ws, p, mw) -> steps(ws, 1).map(st -> new Trace(algorithm, ws, p, mw, st)));
  }

  /**
   * Leaky buckets whose slots are whole milliseconds (P = L·T for T of 1–200 ms) on whole-millisecond
   * times, so that start = time + waitMs is exact and spacing can be checked to the microsecond.
   */
  public static Arbitrary<Trace> leakyInWholeMillis() {
    Arbitrary<Window> window = Combinators.combine(Arbitraries.longs().between(1, 8),
        Arbitraries.longs().between(1, 200)).as((l, t) -> new Window(l, Duration.ofMillis(l * t)));
    Arbitrary<Optional<Duration>> maxWait = Arbitraries.longs().between(0, 3_000).map(Duration::ofMillis)
        .optional(0.6);
    return Combinators.combine(window.list().ofMinSize(1).ofMaxSize(5), maxWait)
        .flatAs((ws, mw) -> steps(ws, 1000)
            .map(st -> new Trace(Algorithm.LEAKY_BUCKET, ws, Rule.DEFAULT_PRECISION, mw, st)));
  }

  /** Up to 150 steps; times advance in multiples of {@code grainMicros}. */
  private static Arbitrary<List<Step>> steps(List<Window> ws, long grainMicros) {
    long minP = ws.stream().mapToLong(Window::periodMicros).min().orElseThrow() / grainMicros;
    long maxP = ws.stream().mapToLong(Window::periodMicros).max().orElseThrow() / grainMicros;
    long maxL = ws.stream().mapToLong(Window::limit).max().orElseThrow();
    Arbitrary<Long> delta = Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.just(0L)),
        Tuple.of(4, Arbitraries.longs().between(1, Math.max(1, minP / maxL))),
        Tuple.of(2, Arbitraries.longs().between(1, Math.max(1, minP))),
        Tuple.of(1, Arbitraries.longs().between(1, Math.max(1, 2 * maxP))));
    Arbitrary<Long> cost = Arbitraries.frequencyOf(
        Tuple.of(1, Arbitraries.just(0L)),
        Tuple.of(5, Arbitraries.just(1L)),
        Tuple.of(3, Arbitraries.longs().between(1, maxL + 1)));
    Arbitrary<long[]> step = Combinators.combine(delta, cost).as((d, c) -> new long[] {d, c});
    Arbitrary<Long> start = Arbitraries.longs().between(0, 10_000_000_000L / grainMicros);
    return Combinators.combine(start, step.list().ofMinSize(1).ofMaxSize(150)).as((s, ds) -> {
      List<Step> out = new ArrayList<>(ds.size());
      long t = BASE_MICROS + s * grainMicros;
      for (long[] d : ds) {
        t += d[0] * grainMicros;
        out.add(new Step(t, d[1]));
      }
      return out;
    });
  }
}
