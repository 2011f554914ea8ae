package dev.sluice.conformance;

import dev.sluice.Window;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The bounds of SPEC §3, checked on what a store actually admitted. Each check throws an
 * {@link AssertionError} naming the first violation.
 */
public final class Bounds {
  private Bounds() {}

  /** An admitted request: when it was decided (and, for shaping, when it may start) and its cost. */
  public record Admission(long atMicros, long startMicros, long cost) {
    public static Admission at(long atMicros, long cost) {
      return new Admission(atMicros, atMicros, cost);
    }
  }

  /** sliding_log, sliding_window: in every interval (t − P, t], admitted cost ≤ L. Admissions in time order. */
  public static void atMostLimitInEveryPeriod(List<Admission> admitted, Window w) {
    long p = w.periodMicros();
    int from = 0;
    long sum = 0;
    // The count over (t − P, t] only grows at admission times, so checking those suffices.
    for (int to = 0; to < admitted.size(); to++) {
      long t = admitted.get(to).atMicros();
      sum += admitted.get(to).cost();
      while (to + 1 < admitted.size() && admitted.get(to + 1).atMicros() == t) {
        to++;
        sum += admitted.get(to).cost();
      }
      while (admitted.get(from).atMicros() <= t - p) {
        sum -= admitted.get(from).cost();
        from++;
      }
      if (sum > w.limit()) {
        throw new AssertionError("admitted " + sum + " in (" + (t - p) + ", " + t + "] µs, over the limit of window "
            + w);
      }
    }
  }

  /** fixed_window: admitted cost ≤ L in every window [k·P, (k+1)·P) aligned to the epoch. */
  public static void atMostLimitPerAlignedWindow(List<Admission> admitted, Window w) {
    Map<Long, Long> counts = new HashMap<>();
    for (Admission a : admitted) {
      long k = Math.floorDiv(a.atMicros(), w.periodMicros());
      long c = counts.merge(k, a.cost(), Long::sum);
      if (c > w.limit()) {
        throw new AssertionError("admitted " + c + " in aligned window " + k + " of " + w);
      }
    }
  }

  /** token_bucket: admitted cost in any closed span [a, b] ≤ L + (b − a)·L/P. Admissions in time order. */
  public static void atMostLimitPlusRefillInEverySpan(List<Admission> admitted, Window w) {
    long l = w.limit();
    long p = w.periodMicros();
    for (int i = 0; i < admitted.size(); i++) {
      long sum = 0;
      for (int j = i; j < admitted.size(); j++) {
        sum += admitted.get(j).cost();
        long span = admitted.get(j).atMicros() - admitted.get(i).atMicros();
        // sum ≤ L + span·L/P, in integers: (sum − L)·P ≤ span·L
        if (Math.multiplyExact(sum - l, p) > Math.multiplyExact(span, l)) {
          throw new AssertionError("admitted " + sum + " in a span of " + span + " µs, over L + d·L/P for " + w);
        }
      }
    }
  }

  /**
   * leaky_bucket: each admitted request starts at least prevCost·⌈P/L⌉ (≥ prevCost·P/L) after the
   * previous one. Admissions in decision order, peeks excluded.
   */
  public static void startsSpacedByTheEmissionInterval(List<Admission> admitted, Window w) {
    long interval = Oracles.emissionInterval(w);
    for (int k = 1; k < admitted.size(); k++) {
      Admission prev = admitted.get(k - 1);
      Admission cur = admitted.get(k);
      long gap = cur.startMicros() - prev.startMicros();
      if (gap < prev.cost() * interval || Math.multiplyExact(gap, w.limit())
          < Math.multiplyExact(prev.cost(), w.periodMicros())) {
        throw new AssertionError("starts " + prev.startMicros() + " (cost " + prev.cost() + ") and "
            + cur.startMicros() + " µs are " + gap + " µs apart; window " + w + " needs "
            + prev.cost() * interval);
      }
    }
  }

  /** leaky_bucket: no admitted request waits longer than max_wait. */
  public static void noWaitAbove(List<Admission> admitted, long maxWaitMicros) {
    for (Admission a : admitted) {
      if (a.startMicros() - a.atMicros() > maxWaitMicros) {
        throw new AssertionError("request at " + a.atMicros() + " µs waits " + (a.startMicros() - a.atMicros())
            + " µs, over max_wait " + maxWaitMicros + " µs");
      }
    }
  }
}
