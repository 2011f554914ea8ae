package dev.sluice.conformance;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Exact models of one (rule, key) under each algorithm, written from the algorithms' stated
 * semantics with the plainest data structures (whole logs of admissions rather than rings and
 * bucket arrays), to compare any store against. Every number a store reports is modelled:
 * verdict, reason, wait, and each window's remaining, retry-after and reset-after.
 *
 * <p>Each model keeps its own per-key clock: a time earlier than the latest seen counts as the
 * latest, as stores do.
 */
public final class Oracles {
  private Oracles() {}

  /** What a store must answer for one item. */
  public record Expected(boolean allowed, DenyReason reason, long waitMs, List<WindowState> windows) {
    public Expected {
      windows = List.copyOf(windows);
    }

    public static Expected of(ItemDecision d) {
      return new Expected(d.allowed(), d.reason(), d.waitMs(), d.windows());
    }
  }

  /** A model of one (rule, key), fed requests alone (one item, no other item to deny them). */
  public interface Oracle {
    Expected decide(long nowMicros, long cost);
  }

  /** The model of {@code key} under {@code rule}, with the key's windows after overrides. */
  public static Oracle of(Rule rule, String key) {
    List<Window> ws = rule.windowsFor(key);
    return switch (rule.algorithm()) {
      case SLIDING_LOG -> new SlidingLog(ws);
      case SLIDING_WINDOW -> new SlidingWindow(ws, rule.precision());
      case FIXED_WINDOW -> new FixedWindow(ws);
      case TOKEN_BUCKET -> new TokenBucket(ws);
      case LEAKY_BUCKET -> new LeakyBucket(ws, rule.maxWait().toNanos() / 1000);
    };
  }

  /** Sub-bucket width of a sliding window: ⌈P/B⌉ microseconds, at least 1. */
  public static long bucketWidth(Window w, int precision) {
    long p = w.periodMicros();
    return Math.max(1, (p + precision - 1) / precision);
  }

  /**
   * How much longer than the exact log a sliding window may hold an admission, in microseconds:
   * (n+1)·w − P with n = ⌈P/w⌉. That is w when w divides P, and less than 2·w always.
   */
  public static long slidingWindowExtraHold(Window w, int precision) {
    long width = bucketWidth(w, precision);
    long n = (w.periodMicros() + width - 1) / width;
    return (n + 1) * width - w.periodMicros();
  }

  /** Emission interval of token and leaky buckets: ⌈P/L⌉ microseconds, at least 1. */
  public static long emissionInterval(Window w) {
    return Math.max(1, (w.periodMicros() + w.limit() - 1) / w.limit());
  }

  static long ceilMillis(long micros) {
    return micros <= 0 ? 0 : (micros + 999) / 1000;
  }

  static long ahead(long t, long now) {
    return t > now ? t - now : 0;
  }

  /** The shape every algorithm shares: a cost above a limit never fits; otherwise per window. */
  private abstract static class Model implements Oracle {
    final long[] limit;
    final long[] period;
    private long latest = Long.MIN_VALUE;

    Model(List<Window> windows) {
      limit = windows.stream().mapToLong(Window::limit).toArray();
      period = windows.stream().mapToLong(Window::periodMicros).toArray();
    }

    @Override
    public final Expected decide(long requested, long cost) {
      long now = Math.max(requested, latest);
      latest = now;
      int n = limit.length;
      boolean[] exceeded = new boolean[n];
      long[] retry = new long[n];
      DenyReason reason = DenyReason.NONE;
      for (int i = 0; i < n; i++) {
        if (cost > limit[i]) {
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
            retry[i] = ceilMillis(r);
            reason = denial();
          }
        }
      }
      boolean fits = reason == DenyReason.NONE;
      long start = fits ? start(now) : now;
      if (fits && cost > 0) {
        admit(now, start, cost);
      }
      List<WindowState> ws = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        ws.add(new WindowState(limit[i], period[i] / 1000, remaining(now, i), exceeded[i] ? retry[i] : 0,
            ceilMillis(reset(now, i)), exceeded[i]));
      }
      return new Expected(fits, reason, fits ? ceilMillis(start - now) : 0, ws);
    }

    /** Microseconds until {@code cost} fits in window {@code i}, 0 if it fits now. */
    abstract long shortfall(long now, long cost, int i);

    DenyReason denial() {
      return DenyReason.LIMIT_EXCEEDED;
    }

    /** When an admitted request starts; shaping delays it. */
    long start(long now) {
      return now;
    }

    abstract void admit(long now, long start, long cost);

    abstract long remaining(long now, int i);

    abstract long reset(long now, int i);
  }

  /** Every admission kept; window i counts those in (now − P, now]. */
  static final class SlidingLog extends Model {
    private final List<long[]> log = new ArrayList<>(); // {time, cost}, oldest first

    SlidingLog(List<Window> ws) {
      super(ws);
    }

    private long used(long now, int i) {
      long sum = 0;
      for (long[] e : log) {
        if (e[0] > now - period[i]) {
          sum += e[1];
        }
      }
      return sum;
    }

    @Override
    long shortfall(long now, long cost, int i) {
      long used = used(now, i);
      if (used + cost <= limit[i]) {
        return 0;
      }
      long freed = 0;
      for (long[] e : log) {
        if (e[0] > now - period[i]) {
          freed += e[1];
          if (used - freed + cost <= limit[i]) {
            return e[0] + period[i] - now;
          }
        }
      }
      throw new AssertionError("a cost within the limit always fits once the window is empty");
    }

    @Override
    void admit(long now, long start, long cost) {
      log.add(new long[] {now, cost});
    }

    @Override
    long remaining(long now, int i) {
      return limit[i] - used(now, i);
    }

    @Override
    long reset(long now, int i) {
      return log.isEmpty() ? 0 : ahead(log.get(log.size() - 1)[0] + period[i], now);
    }
  }

  /**
   * Every admission kept; in window i an admission at a counts until its epoch-aligned bucket of
   * width w leaves the window: E(a) = (⌊a/w⌋ + n + 1)·w, n = ⌈P/w⌉.
   */
  static final class SlidingWindow extends Model {
    private final List<long[]> log = new ArrayList<>();
    private final long[] width;
    private final long[] buckets;

    SlidingWindow(List<Window> ws, int precision) {
      super(ws);
      width = ws.stream().mapToLong(w -> bucketWidth(w, precision)).toArray();
      buckets = new long[ws.size()];
      for (int i = 0; i < buckets.length; i++) {
        buckets[i] = (period[i] + width[i] - 1) / width[i];
      }
    }

    private long leaves(long a, int i) {
      return (Math.floorDiv(a, width[i]) + buckets[i] + 1) * width[i];
    }

    private long used(long now, int i) {
      long sum = 0;
      for (long[] e : log) {
        if (leaves(e[0], i) > now) {
          sum += e[1];
        }
      }
      return sum;
    }

    @Override
    long shortfall(long now, long cost, int i) {
      long used = used(now, i);
      if (used + cost <= limit[i]) {
        return 0;
      }
      long freed = 0;
      for (long[] e : log) {
        if (leaves(e[0], i) > now) {
          freed += e[1];
          if (used - freed + cost <= limit[i]) {
            return leaves(e[0], i) - now;
          }
        }
      }
      throw new AssertionError("a cost within the limit always fits once the window is empty");
    }

    @Override
    void admit(long now, long start, long cost) {
      log.add(new long[] {now, cost});
    }

    @Override
    long remaining(long now, int i) {
      return limit[i] - used(now, i);
    }

    @Override
    long reset(long now, int i) {
      return log.isEmpty() ? 0 : ahead(leaves(log.get(log.size() - 1)[0], i), now);
    }
  }

  /** A count per window per aligned period [k·P, (k+1)·P). */
  static final class FixedWindow extends Model {
    private final List<Map<Long, Long>> counts = new ArrayList<>();

    FixedWindow(List<Window> ws) {
      super(ws);
      ws.forEach(w -> counts.add(new HashMap<>()));
    }

    private long used(long now, int i) {
      return counts.get(i).getOrDefault(Math.floorDiv(now, period[i]), 0L);
    }

    private long end(long now, int i) {
      return (Math.floorDiv(now, period[i]) + 1) * period[i];
    }

    @Override
    long shortfall(long now, long cost, int i) {
      return used(now, i) + cost <= limit[i] ? 0 : end(now, i) - now;
    }

    @Override
    void admit(long now, long start, long cost) {
      for (int i = 0; i < limit.length; i++) {
        counts.get(i).merge(Math.floorDiv(now, period[i]), cost, Long::sum);
      }
    }

    @Override
    long remaining(long now, int i) {
      return limit[i] - used(now, i);
    }

    @Override
    long reset(long now, int i) {
      return used(now, i) == 0 ? 0 : end(now, i) - now;
    }
  }

  /**
   * GCRA: per window a theoretical arrival time; emission interval T = ⌈P/L⌉; cost c fits when
   * max(TAT, now) + c·T − now ≤ L·T.
   */
  static final class TokenBucket extends Model {
    private final long[] interval;
    private final long[] tat;

    TokenBucket(List<Window> ws) {
      super(ws);
      interval = ws.stream().mapToLong(Oracles::emissionInterval).toArray();
      tat = new long[ws.size()];
      java.util.Arrays.fill(tat, Long.MIN_VALUE);
    }

    @Override
    long shortfall(long now, long cost, int i) {
      return Math.max(0, Math.max(tat[i], now) + cost * interval[i] - now - limit[i] * interval[i]);
    }

    @Override
    void admit(long now, long start, long cost) {
      for (int i = 0; i < tat.length; i++) {
        tat[i] = Math.max(tat[i], now) + cost * interval[i];
      }
    }

    @Override
    long remaining(long now, int i) {
      long backlog = ahead(tat[i], now);
      return limit[i] - (backlog + interval[i] - 1) / interval[i];
    }

    @Override
    long reset(long now, int i) {
      return ahead(tat[i], now);
    }
  }

  /**
   * Shaping: per window the next free slot, slots T = ⌈P/L⌉ apart. A request starts at the latest
   * of now and every window's next slot; denied when some slot is more than max_wait away.
   */
  static final class LeakyBucket extends Model {
    private final long[] interval;
    private final long[] next;
    private final long maxWait;

    LeakyBucket(List<Window> ws, long maxWaitMicros) {
      super(ws);
      interval = ws.stream().mapToLong(Oracles::emissionInterval).toArray();
      next = new long[ws.size()];
      java.util.Arrays.fill(next, Long.MIN_VALUE);
      maxWait = maxWaitMicros;
    }

    @Override
    long shortfall(long now, long cost, int i) {
      return Math.max(0, ahead(next[i], now) - maxWait);
    }

    @Override
    DenyReason denial() {
      return DenyReason.WAIT_EXCEEDS_MAX_WAIT;
    }

    @Override
    long start(long now) {
      long s = now;
      for (long n : next) {
        s = Math.max(s, n);
      }
      return s;
    }

    @Override
    void admit(long now, long start, long cost) {
      for (int i = 0; i < next.length; i++) {
        next[i] = start + cost * interval[i];
      }
    }

    @Override
    long remaining(long now, int i) {
      long queued = ahead(next[i], now);
      return queued > maxWait ? 0 : Math.min(limit[i], (maxWait - queued) / interval[i] + 1);
    }

    @Override
    long reset(long now, int i) {
      return ahead(next[i], now);
    }
  }
}
