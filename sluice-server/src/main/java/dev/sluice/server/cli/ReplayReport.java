package dev.sluice.server.cli;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code sluice replay --report} draws, gathered while the trace is decided, in bounded
 * memory whatever the trace's length or keys:
 *
 * <ul>
 *   <li>time in at most {@link #BUCKETS} buckets: a bucket starts 1 ms wide and doubles (the
 *       series merged pairwise) whenever the trace outgrows them, so a trace of a second and one
 *       of a month are drawn alike;
 *   <li>per rule and window, the fullest key's use of the window in each bucket (its limit less
 *       the least {@code remaining} any decision reported), and the items denied by the window;
 *   <li>per rule, items of admitted and of denied requests, as the replay's summary counts them;
 *   <li>the denied keys, counted exactly until their characters take {@link #MAX_KEY_CHARS};
 *       denials of keys met after that are counted as "other keys".
 * </ul>
 *
 * <p>A report has one side per rule set: the configuration replayed, and with {@code --compare}
 * another one deciding the same requests.
 */
final class ReplayReport {
  static final int BUCKETS = 240;
  /** A point of a max series in which no decision reported the window. */
  static final long NONE = -1;
  static final int MAX_KEY_CHARS = 4 << 20;
  /** Series kept at most (2 KB each): the first rules and windows met are charted. */
  static final int MAX_SERIES = 2048;
  /** Distinct windows kept per rule: its own, and those of overrides and live limits met first. */
  static final int MAX_WINDOWS = 16;

  /** The trace's time axis, shared by both sides so that their series line up. */
  final class Timeline {
    long startMs = Long.MIN_VALUE;
    long endMs;
    long widthMs = 1;

    int bucket(long t) {
      if (startMs == Long.MIN_VALUE) {
        startMs = t;
      }
      endMs = Math.max(endMs, t);
      long i = (t - startMs) / widthMs;
      while (i >= BUCKETS) {
        widthMs *= 2;
        for (Series s : series) {
          s.halve();
        }
        i = (t - startMs) / widthMs;
      }
      return (int) i;
    }
  }

  /**
   * A series of {@link #BUCKETS} values, each merged with its neighbour by sum or by max; or, past
   * {@link #MAX_SERIES}, none ({@code v} null: the rule's totals are kept, its charts are not).
   */
  static final class Series {
    final long[] v;
    final boolean max;

    Series(boolean max, boolean kept) {
      this.max = max;
      this.v = kept ? new long[BUCKETS] : null;
      if (max && kept) {
        // No decision in a point: nothing was seen of the window then.
        java.util.Arrays.fill(v, NONE);
      }
    }

    void add(int b, long x) {
      if (v != null) {
        v[b] += x;
      }
    }

    void atLeast(int b, long x) {
      if (v != null && x > v[b]) {
        v[b] = x;
      }
    }

    void halve() {
      for (int i = 0; i < BUCKETS / 2; i++) {
        v[i] = max ? Math.max(v[2 * i], v[2 * i + 1]) : v[2 * i] + v[2 * i + 1];
      }
      java.util.Arrays.fill(v, BUCKETS / 2, BUCKETS, max ? NONE : 0);
    }
  }

  /** One window of a rule as decisions reported it. */
  final class WindowStats {
    final long limit;
    final long periodMs;
    final Series used = newSeries(true);
    final Series denied = newSeries(false);
    long deniedTotal;

    WindowStats(long limit, long periodMs) {
      this.limit = limit;
      this.periodMs = periodMs;
    }
  }

  final class RuleStats {
    final Rule rule;
    long allowed;
    long denied;
    long shadowDenied;
    final Series admitted = newSeries(false);
    final Map<String, WindowStats> windows = new LinkedHashMap<>();

    RuleStats(Rule rule) {
      this.rule = rule;
    }

    /** The window's stats; null past {@link #MAX_WINDOWS} distinct windows (live limits, overrides). */
    WindowStats window(WindowState w) {
      String k = w.limit() + "/" + w.periodMs();
      WindowStats ws = windows.get(k);
      if (ws == null && windows.size() < MAX_WINDOWS) {
        ws = new WindowStats(w.limit(), w.periodMs());
        windows.put(k, ws);
      }
      return ws;
    }
  }

  /** What one rule set decided. */
  final class Side {
    final String name;
    final RuleSet rules;
    final Map<String, RuleStats> perRule = new HashMap<>();
    final Map<String, long[]> deniedKeys = new HashMap<>();
    long keyChars;
    long otherKeyDenials;
    long requests;
    long allowed;

    Side(String name, RuleSet rules) {
      this.name = name;
      this.rules = rules;
    }

    void record(long t, Decision d) {
      int b = timeline.bucket(t);
      requests++;
      if (d.allowed()) {
        allowed++;
      }
      for (ItemDecision it : d.items()) {
        RuleStats r = perRule.computeIfAbsent(it.rule(), n -> new RuleStats(rules.get(n)));
        if (d.allowed()) {
          r.allowed++;
          r.admitted.add(b, it.cost());
        } else {
          r.denied++;
        }
        if (it.shadow() && !it.allowed()) {
          r.shadowDenied++;
        }
        for (WindowState w : it.windows()) {
          WindowStats ws = r.window(w);
          if (ws == null) {
            continue;
          }
          ws.used.atLeast(b, Math.max(0, w.limit() - Math.max(0, w.remaining())));
          if (w.exceeded()) {
            ws.denied.add(b, 1);
            ws.deniedTotal++;
          }
        }
        if (!it.allowed() && !it.shadow()) {
          countDenied(it.rule(), it.key());
        }
      }
    }

    private void countDenied(String rule, String key) {
      String k = rule + " " + key;
      long[] c = deniedKeys.get(k);
      if (c == null) {
        if (keyChars + k.length() > MAX_KEY_CHARS) {
          otherKeyDenials++;
          return;
        }
        keyChars += k.length();
        c = new long[1];
        deniedKeys.put(k, c);
      }
      c[0]++;
    }

    /** Rules in configuration order, those that saw no request left out. */
    List<RuleStats> rulesSeen() {
      List<RuleStats> out = new ArrayList<>();
      for (Rule r : rules.rules()) {
        RuleStats s = perRule.get(r.name());
        if (s != null) {
          out.add(s);
        }
      }
      return out;
    }

    List<Map.Entry<String, long[]>> topDenied(int n) {
      return deniedKeys.entrySet().stream()
          .sorted(Comparator.comparingLong((Map.Entry<String, long[]> e) -> -e.getValue()[0])
              .thenComparing(Map.Entry::getKey))
          .limit(n).toList();
    }
  }

  final Timeline timeline = new Timeline();
  private final List<Series> series = new ArrayList<>();
  final String traceName;
  final List<Side> sides = new ArrayList<>();

  ReplayReport(String traceName) {
    this.traceName = traceName;
  }

  Side side(String name, RuleSet rules) {
    Side s = new Side(name, rules);
    sides.add(s);
    return s;
  }

  private Series newSeries(boolean max) {
    Series s = new Series(max, series.size() < MAX_SERIES);
    if (s.v != null) {
      series.add(s);
    }
    return s;
  }
}
