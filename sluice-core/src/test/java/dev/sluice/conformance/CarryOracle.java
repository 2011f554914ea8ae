package dev.sluice.conformance;

import dev.sluice.Algorithm;
import dev.sluice.DenyReason;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.conformance.Oracles.Expected;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An exact model of one (rule, key) whose windows change between decisions, written from the
 * stated semantics (docs/algorithms.md, "When a key's windows change") with plain structures:
 * every unit or admission kept, schedules as numbers. A change is decided on from the key's next
 * decision, as of the latest time the key has seen: windows are matched by period, a kept
 * period keeps its consumption (a schedule its backlog in whole units of the old interval,
 * however many the new limit allows, at most 2^50 µs ahead), a new one starts empty, a dropped
 * one is forgotten; the sliding log keeps its units inside the old longest window, the newest up
 * to the new largest limit, for every window. Only an admission keeps the carried state: a
 * decision that consumes nothing under the new windows (a peek, a denial) leaves the key exactly
 * as it was, its latest time included.
 */
public final class CarryOracle {
  private final Rule rule;
  private List<Window> windows;
  private List<Window> pending;
  private long latest = Long.MIN_VALUE;

  /** sliding_log: every unit's time, oldest first. */
  private List<Long> units = new ArrayList<>();
  /** fixed_window: per window, count by aligned period index. */
  private List<Map<Long, Long>> counts = new ArrayList<>();
  /** sliding_window: per window, admissions {time, cost}. */
  private List<List<long[]>> admissions = new ArrayList<>();
  /** token_bucket: TATs; leaky_bucket: next slots. */
  private long[] schedule;

  public CarryOracle(Rule rule, List<Window> windows) {
    this.rule = rule;
    this.windows = List.copyOf(windows);
    for (int i = 0; i < windows.size(); i++) {
      counts.add(new HashMap<>());
      admissions.add(new ArrayList<>());
    }
    schedule = new long[windows.size()];
    java.util.Arrays.fill(schedule, Long.MIN_VALUE);
  }

  /** The key's windows from its next decision on. */
  public void windows(List<Window> ws) {
    pending = List.copyOf(ws);
  }

  private static long interval(Window w) {
    return Oracles.emissionInterval(w);
  }

  private long maxWait(List<Window> ws) {
    return rule.maxWaitFor(ws).toNanos() / 1000;
  }

  /** The key's state as it stands: restored when a decision under new windows admits nothing. */
  private record Saved(List<Window> windows, long latest, List<Long> units, List<Map<Long, Long>> counts,
      List<List<long[]>> admissions, long[] schedule) {}

  private Saved save() {
    List<Map<Long, Long>> c = new ArrayList<>();
    counts.forEach(m -> c.add(new HashMap<>(m)));
    List<List<long[]>> a = new ArrayList<>();
    admissions.forEach(l -> a.add(new ArrayList<>(l)));
    return new Saved(windows, latest, new ArrayList<>(units), c, a, schedule.clone());
  }

  private void restore(Saved s) {
    windows = s.windows();
    latest = s.latest();
    units = s.units();
    counts = s.counts();
    admissions = s.admissions();
    schedule = s.schedule();
  }

  /**
   * Whether the next decision is under other windows than the key's state counts by. A key never
   * decided has no state to keep: its first decision makes one for its windows, as for any key.
   */
  private boolean changing() {
    return pending != null && !pending.equals(windows) && latest != Long.MIN_VALUE;
  }

  private void carry() {
    List<Window> next = pending;
    pending = null;
    if (next == null || next.equals(windows)) {
      return;
    }
    List<Window> old = windows;
    windows = next;
    List<Map<Long, Long>> c = new ArrayList<>();
    List<List<long[]>> a = new ArrayList<>();
    long[] s = new long[next.size()];
    for (int j = 0; j < next.size(); j++) {
      Window w = next.get(j);
      int m = -1;
      for (int i = 0; i < old.size() && latest != Long.MIN_VALUE; i++) {
        if (old.get(i).periodMicros() == w.periodMicros()) {
          m = i;
          break;
        }
      }
      c.add(m < 0 ? new HashMap<>() : counts.get(m));
      a.add(m < 0 ? new ArrayList<>() : admissions.get(m));
      s[j] = Long.MIN_VALUE;
      if (m >= 0) {
        long from = interval(old.get(m));
        long b = Oracles.ahead(schedule[m], latest);
        // Whole units of the old interval, a partly refilled one counting as consumed, all of them.
        java.math.BigInteger backlog = java.math.BigInteger.valueOf((b + from - 1) / from)
            .multiply(java.math.BigInteger.valueOf(interval(w))).min(java.math.BigInteger.ONE.shiftLeft(50));
        s[j] = backlog.signum() == 0 ? Long.MIN_VALUE : latest + backlog.longValueExact();
      }
    }
    counts = c;
    admissions = a;
    schedule = s;
    if (latest != Long.MIN_VALUE) {
      long oldLongest = old.stream().mapToLong(Window::periodMicros).max().orElseThrow();
      long cap = next.stream().mapToLong(Window::limit).max().orElseThrow();
      List<Long> inside = units.stream().filter(u -> u > latest - oldLongest).toList();
      units = new ArrayList<>(inside.subList((int) Math.max(0, inside.size() - cap), inside.size()));
    }
  }

  public Expected decide(long requested, long cost) {
    Saved before = changing() ? save() : null;
    List<Window> next = pending;
    carry();
    Expected e = decideNow(requested, cost);
    if (before != null && !(e.allowed() && cost > 0)) {
      restore(before);
      pending = next;
    }
    return e;
  }

  private Expected decideNow(long requested, long cost) {
    long now = Math.max(requested, latest);
    latest = now;
    int n = windows.size();
    boolean[] exceeded = new boolean[n];
    long[] retry = new long[n];
    DenyReason reason = DenyReason.NONE;
    for (int i = 0; i < n; i++) {
      if (cost > windows.get(i).limit()) {
        exceeded[i] = true;
        retry[i] = WindowState.NEVER;
        reason = DenyReason.COST_EXCEEDS_LIMIT;
      }
    }
    if (reason == DenyReason.NONE) {
      for (int i = 0; i < n; i++) {
        long r = shortfall(now, cost, i);
        if (r > 0) {
          exceeded[i] = true;
          retry[i] = Oracles.ceilMillis(r);
          reason = rule.algorithm() == Algorithm.LEAKY_BUCKET ? DenyReason.WAIT_EXCEEDS_MAX_WAIT
              : DenyReason.LIMIT_EXCEEDED;
        }
      }
    }
    boolean fits = reason == DenyReason.NONE;
    long start = now;
    if (fits && rule.algorithm() == Algorithm.LEAKY_BUCKET) {
      for (long x : schedule) {
        start = Math.max(start, x);
      }
    }
    if (fits && cost > 0) {
      admit(now, start, cost);
    }
    List<WindowState> ws = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Window w = windows.get(i);
      ws.add(new WindowState(w.limit(), w.periodMillis(), remaining(now, i), exceeded[i] ? retry[i] : 0,
          Oracles.ceilMillis(reset(now, i)), exceeded[i]));
    }
    return new Expected(fits, reason, fits ? Oracles.ceilMillis(start - now) : 0, ws);
  }

  private long limit(int i) {
    return windows.get(i).limit();
  }

  private long period(int i) {
    return windows.get(i).periodMicros();
  }

  private long inLog(long now, int i) {
    return units.stream().filter(u -> u > now - period(i)).count();
  }

  private long width(int i) {
    return Oracles.bucketWidth(windows.get(i), rule.precision());
  }

  private long leaves(long a, int i) {
    long w = width(i);
    return (Math.floorDiv(a, w) + (period(i) + w - 1) / w + 1) * w;
  }

  private long inBuckets(long now, int i) {
    long sum = 0;
    for (long[] e : admissions.get(i)) {
      if (leaves(e[0], i) > now) {
        sum += e[1];
      }
    }
    return sum;
  }

  private long fixed(long now, int i) {
    return counts.get(i).getOrDefault(Math.floorDiv(now, period(i)), 0L);
  }

  private long fixedEnd(long now, int i) {
    return (Math.floorDiv(now, period(i)) + 1) * period(i);
  }

  private long shortfall(long now, long cost, int i) {
    switch (rule.algorithm()) {
      case SLIDING_LOG -> {
        long k = limit(i) - cost + 1; // the unit that must have left the window
        if (inLog(now, i) < k) {
          return 0;
        }
        return units.get(units.size() - (int) k) + period(i) - now;
      }
      case SLIDING_WINDOW -> {
        long used = inBuckets(now, i);
        long freed = 0;
        for (long[] e : admissions.get(i)) {
          if (used - freed + cost <= limit(i)) {
            break;
          }
          if (leaves(e[0], i) > now) {
            freed += e[1];
            if (used - freed + cost <= limit(i)) {
              return leaves(e[0], i) - now;
            }
          }
        }
        return 0;
      }
      case FIXED_WINDOW -> {
        return fixed(now, i) + cost <= limit(i) ? 0 : fixedEnd(now, i) - now;
      }
      case TOKEN_BUCKET -> {
        long t = interval(windows.get(i));
        return Math.max(0, Math.max(schedule[i], now) + cost * t - now - limit(i) * t);
      }
      case LEAKY_BUCKET -> {
        return Math.max(0, Oracles.ahead(schedule[i], now) - maxWait(windows));
      }
      default -> throw new AssertionError();
    }
  }

  private void admit(long now, long start, long cost) {
    for (long u = 0; u < cost; u++) {
      units.add(now);
    }
    for (int i = 0; i < windows.size(); i++) {
      counts.get(i).merge(Math.floorDiv(now, period(i)), cost, Long::sum);
      admissions.get(i).add(new long[] {now, cost});
      long t = interval(windows.get(i));
      schedule[i] = rule.algorithm() == Algorithm.LEAKY_BUCKET ? start + cost * t
          : Math.max(schedule[i], now) + cost * t;
    }
  }

  private long remaining(long now, int i) {
    long t = interval(windows.get(i));
    return switch (rule.algorithm()) {
      case SLIDING_LOG -> limit(i) - Math.min(limit(i), inLog(now, i));
      case SLIDING_WINDOW -> Math.max(0, limit(i) - inBuckets(now, i));
      case FIXED_WINDOW -> Math.max(0, limit(i) - fixed(now, i));
      case TOKEN_BUCKET -> Math.max(0, limit(i) - (Oracles.ahead(schedule[i], now) + t - 1) / t);
      case LEAKY_BUCKET -> {
        long queued = Oracles.ahead(schedule[i], now);
        long wait = maxWait(windows);
        yield queued > wait ? 0 : Math.min(limit(i), (wait - queued) / t + 1);
      }
    };
  }

  private long reset(long now, int i) {
    return switch (rule.algorithm()) {
      case SLIDING_LOG -> units.isEmpty() ? 0 : Oracles.ahead(units.get(units.size() - 1) + period(i), now);
      case SLIDING_WINDOW -> {
        long last = Long.MIN_VALUE;
        for (long[] e : admissions.get(i)) {
          if (leaves(e[0], i) > now) {
            last = Math.max(last, leaves(e[0], i));
          }
        }
        yield Oracles.ahead(last, now);
      }
      case FIXED_WINDOW -> fixed(now, i) == 0 ? 0 : fixedEnd(now, i) - now;
      case TOKEN_BUCKET, LEAKY_BUCKET -> Oracles.ahead(schedule[i], now);
    };
  }
}
