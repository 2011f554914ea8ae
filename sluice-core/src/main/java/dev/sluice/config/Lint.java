package dev.sluice.config;

import dev.sluice.Algorithm;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.Window;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds windows that can never bind: windows that, given another window of the same list, never
 * deny a request the other would admit, so removing them changes no decision. The conditions
 * are per algorithm and conservative — a window is reported only when that is provable from one
 * other window (see {@code docs/configuration.md}, "Lint"). The configuration loader reports
 * these as warnings.
 */
final class Lint {

  private Lint() {}

  /**
   * A window that can never bind.
   *
   * @param window its index in the list checked
   * @param message why, e.g. {@code window 1 (600/600s) can never bind: window 2 (10/10s) ...}
   */
  public record Finding(int window, String message) {}

  /** Findings for {@code windows} counted by {@code algorithm} ({@code precision} for sliding_window). */
  public static List<Finding> windows(Algorithm algorithm, int precision, List<Window> windows) {
    List<Finding> out = new ArrayList<>();
    for (int a = 0; a < windows.size(); a++) {
      Window wa = windows.get(a);
      String why = null;
      for (int b = 0; b < windows.size() && why == null; b++) {
        Window wb = windows.get(b);
        if (b == a) {
          continue;
        }
        if (wa.equals(wb)) {
          if (b < a) {
            why = "duplicates window " + (b + 1);
          }
          continue;
        }
        String reason = neverBinds(algorithm, precision, wa, wb);
        // Two different windows can rule each other out only when they act the same
        // (token_bucket and leaky_bucket with equal limit and interval): keep the first.
        if (reason != null && !(b > a && neverBinds(algorithm, precision, wb, wa) != null)) {
          why = "can never bind: window " + (b + 1) + " (" + show(wb) + ") " + reason;
        }
      }
      if (why != null) {
        out.add(new Finding(a, "window " + (a + 1) + " (" + show(wa) + ") " + why));
      }
    }
    return out;
  }

  /** Findings for the rule's own windows. */
  public static List<Finding> windows(Rule rule) {
    return windows(rule.algorithm(), rule.precision(), rule.windows());
  }

  /** Findings for the windows of the rule's override number {@code index}. */
  public static List<Finding> overrideWindows(Rule rule, int index) {
    return windows(rule.algorithm(), rule.precision(), rule.overrides().get(index).windows());
  }

  /**
   * Why window {@code a} never denies what window {@code b} admits, or null if it may. The
   * reason completes "window b (…) …".
   */
  static String neverBinds(Algorithm algorithm, int precision, Window a, Window b) {
    long la = a.limit();
    long lb = b.limit();
    long pa = a.periodMicros();
    long pb = b.periodMicros();
    switch (algorithm) {
      case SLIDING_LOG: {
        // (t−Pa, t] is covered by k = ⌈Pa/Pb⌉ intervals of length Pb, each holding ≤ Lb
        // (the new request included, since b admits it), and no fewer will do in general:
        // bursts of Lb spaced exactly Pb apart fit in (t−Pa, t]. So a binds iff La < k·Lb.
        long k = ceilDiv(pa, pb);
        if (k <= la / lb) {
          return k == 1
              ? "is at least as long and allows no more (" + lb + " ≤ " + la + ")"
              : "already caps any " + fmt(pa) + " at " + lb + " × ⌈" + fmt(pa) + "/" + fmt(pb) + "⌉ = " + k * lb
                  + ", within its limit of " + la;
        }
        return null;
      }
      case SLIDING_WINDOW: {
        // Window a counts its n+1 most recent buckets of width w: admissions in a span shorter
        // than S = (n+1)·w. Every algorithm bound for b holds on the exact log (the counters
        // never count less), so ⌈S/Pb⌉·Lb caps what a can see. With equal periods the two use
        // the very same buckets.
        if (pa == pb) {
          return lb <= la ? "uses the same buckets and allows no more (" + lb + " ≤ " + la + ")" : null;
        }
        long w = Math.max(1, ceilDiv(pa, precision));
        long span = (ceilDiv(pa, w) + 1) * w;
        long k = ceilDiv(span, pb);
        if (k <= la / lb) {
          return k == 1
              ? "covers all " + fmt(span) + " that window counts (precision " + precision + ") and allows no more ("
                  + lb + " ≤ " + la + ")"
              : "already caps the " + fmt(span) + " that window counts (precision " + precision + ") at " + lb
                  + " × ⌈" + fmt(span) + "/" + fmt(pb) + "⌉ = " + k * lb + ", within its limit of " + la;
        }
        return null;
      }
      case FIXED_WINDOW: {
        // An aligned window of a meets at most n aligned windows of b, each holding ≤ Lb.
        long n;
        String how;
        if (pa % pb == 0) {
          n = pa / pb;
          how = n == 1 ? "has the same aligned windows" : "fits " + n + " aligned windows in each aligned " + fmt(pa);
        } else if (pb % pa == 0) {
          n = 1;
          how = "has aligned windows that contain each of its aligned windows";
        } else {
          n = pa / pb + 2;
          how = "meets at most " + n + " of its aligned windows in any aligned " + fmt(pa);
        }
        if (n <= la / lb) {
          return n == 1
              ? how + " and allows no more (" + lb + " ≤ " + la + ")"
              : how + ", allowing at most " + n + " × " + lb + " = " + n * lb + ", within its limit of " + la;
        }
        return null;
      }
      case TOKEN_BUCKET:
      case LEAKY_BUCKET: {
        // As meters both are buckets of capacity L draining one unit per T = ⌈P/L⌉ µs; fed the
        // same admissions, the one draining no slower and holding no less is never the fuller
        // one, so it never denies first. For leaky_bucket every window's next slot is set from
        // one start time, so a shorter interval is never the later slot.
        long ta = Math.max(1, ceilDiv(pa, la));
        long tb = Math.max(1, ceilDiv(pb, lb));
        if (ta <= tb && lb <= la) {
          String verb = algorithm == Algorithm.TOKEN_BUCKET ? "refills no faster" : "spaces requests no closer";
          return verb + " (one unit per " + fmt(tb) + " vs " + fmt(ta) + ") and holds no more (" + lb + " ≤ " + la
              + ")";
        }
        return null;
      }
      default:
        throw new IllegalStateException("no lint for " + algorithm);
    }
  }

  /**
   * Messages for override key patterns that never apply because an earlier pattern (of an
   * earlier override, or earlier in the same one) matches every key they match: the first
   * matching override wins.
   */
  static List<PatternFinding> shadowedPatterns(List<KeyOverride> overrides) {
    List<PatternFinding> out = new ArrayList<>();
    for (int j = 0; j < overrides.size(); j++) {
      List<String> keys = overrides.get(j).keys();
      for (int q = 0; q < keys.size(); q++) {
        String later = keys.get(q);
        String found = null;
        for (int i = 0; i <= j && found == null; i++) {
          List<String> earlier = overrides.get(i).keys();
          int upTo = i == j ? q : earlier.size();
          for (int p = 0; p < upTo && found == null; p++) {
            if (covers(earlier.get(p), later)) {
              found = i == j
                  ? "key pattern '" + later + "' never applies: '" + earlier.get(p) + "' earlier in the same override"
                      + " matches every key it matches"
                  : "key pattern '" + later + "' never applies: override " + (i + 1) + " ('" + earlier.get(p)
                      + "') matches every key it matches, and the first matching override wins";
            }
          }
        }
        if (found != null) {
          out.add(new PatternFinding(j, q, found));
        }
      }
    }
    return out;
  }

  /** A key pattern that never applies: pattern {@code pattern} of override {@code override}. */
  record PatternFinding(int override, int pattern, String message) {}

  /** Whether every key that {@code later} matches is matched by {@code earlier}. */
  static boolean covers(String earlier, String later) {
    if (!earlier.endsWith("*")) {
      return earlier.equals(later);
    }
    String prefix = earlier.substring(0, earlier.length() - 1);
    String other = later.endsWith("*") ? later.substring(0, later.length() - 1) : later;
    return other.startsWith(prefix);
  }

  static String show(Window w) {
    return w.limit() + "/" + fmt(w.periodMicros());
  }

  private static String fmt(long micros) {
    return Durations.format(micros);
  }

  private static long ceilDiv(long x, long y) {
    return -Math.floorDiv(-x, y);
  }
}
