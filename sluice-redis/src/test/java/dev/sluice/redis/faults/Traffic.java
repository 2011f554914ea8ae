package dev.sluice.redis.faults;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;
import java.util.function.Supplier;

/**
 * Steady traffic of synchronous decisions from a few threads, in named lanes (a lane's threads
 * send the same kind of request), recording every call: when it started and ended
 * ({@link System#nanoTime}), what the caller saw, its first item's key, and that item's first
 * window's {@code remaining}.
 * Counters are live (for waiting on a condition); the records are read once the traffic stopped.
 */
final class Traffic implements AutoCloseable {
  /** What a caller saw. */
  enum Outcome { ALLOWED, DENIED, DEGRADED_ALLOWED, DEGRADED_DENIED, ERROR }

  private final RateLimiter limiter;
  private final long pauseNanos;
  private final boolean record;
  private final Map<String, Lane> lanes = new LinkedHashMap<>();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final List<Thread> threads = new ArrayList<>();

  /**
   * @param pauseMicros how long each thread rests between calls: traffic paced so that the
   *     machine's cores stay free for the servers under test
   */
  Traffic(RateLimiter limiter, long pauseMicros) {
    this(limiter, pauseMicros, true);
  }

  /** @param record false: counters only, no records (a long run, whose heap must stay flat) */
  Traffic(RateLimiter limiter, long pauseMicros, boolean record) {
    this.limiter = limiter;
    this.pauseNanos = TimeUnit.MICROSECONDS.toNanos(pauseMicros);
    this.record = record;
  }

  /** Adds a lane of {@code threads} threads sending {@code next}'s requests; call before {@link #start}. */
  Traffic lane(String name, int threads, Supplier<Request> next) {
    Lane lane = new Lane(name, next);
    lanes.put(name, lane);
    for (int i = 0; i < threads; i++) {
      Recorder r = new Recorder();
      lane.recorders.add(r);
      Thread t = new Thread(() -> loop(lane, r), "traffic-" + name + "-" + i);
      t.setDaemon(true);
      this.threads.add(t);
    }
    return this;
  }

  Traffic start() {
    threads.forEach(Thread::start);
    return this;
  }

  private void loop(Lane lane, Recorder r) {
    while (running.get()) {
      Request req = lane.next.get();
      long start = System.nanoTime();
      Outcome o;
      long remaining = -1;
      try {
        Decision d = limiter.acquire(req);
        if (!d.items().isEmpty() && !d.items().get(0).windows().isEmpty()) {
          remaining = d.items().get(0).windows().get(0).remaining();
        }
        o = d.degraded() ? (d.allowed() ? Outcome.DEGRADED_ALLOWED : Outcome.DEGRADED_DENIED)
            : d.allowed() ? Outcome.ALLOWED : Outcome.DENIED;
      } catch (RuntimeException e) {
        o = Outcome.ERROR;
        lane.lastError = e;
      }
      long end = System.nanoTime();
      if (record) {
        r.add(start, end, o, remaining, req.items().get(0).key());
      }
      lane.counts.incrementAndGet(o.ordinal());
      if (pauseNanos > 0) {
        LockSupport.parkNanos(pauseNanos);
      }
    }
  }

  /** Calls of every lane so far that ended so. */
  long count(Outcome o) {
    return lanes.keySet().stream().mapToLong(l -> count(l, o)).sum();
  }

  /** Calls of {@code lane} so far that ended so. */
  long count(String lane, Outcome o) {
    return lanes.get(lane).counts.get(o.ordinal());
  }

  /** The exception of the lane's last call that threw, or null. */
  RuntimeException lastError(String lane) {
    return lanes.get(lane).lastError;
  }

  @Override
  public void close() throws InterruptedException {
    running.set(false);
    for (Thread t : threads) {
      t.join(10_000);
      if (t.isAlive()) {
        throw new AssertionError(t.getName() + " did not stop within 10 s: a call hangs");
      }
    }
  }

  /** The calls of a lane, in the order they ended; read after {@link #close}. */
  Calls calls(String lane) {
    return new Calls(lanes.get(lane).recorders);
  }

  /** Every lane's calls together. */
  Calls calls() {
    List<Recorder> all = new ArrayList<>();
    lanes.values().forEach(l -> all.addAll(l.recorders));
    return new Calls(all);
  }

  private static final class Lane {
    final String name;
    final Supplier<Request> next;
    final List<Recorder> recorders = new ArrayList<>();
    final AtomicLongArray counts = new AtomicLongArray(Outcome.values().length);
    volatile RuntimeException lastError;

    Lane(String name, Supplier<Request> next) {
      this.name = name;
      this.next = next;
    }
  }

  /** One thread's records, appended by that thread only. */
  private static final class Recorder {
    long[] starts = new long[4096];
    long[] ends = new long[4096];
    long[] remaining = new long[4096];
    byte[] outcomes = new byte[4096];
    String[] keys = new String[4096];
    int n;

    void add(long start, long end, Outcome o, long rem, String key) {
      if (n == starts.length) {
        starts = Arrays.copyOf(starts, n * 2);
        ends = Arrays.copyOf(ends, n * 2);
        remaining = Arrays.copyOf(remaining, n * 2);
        outcomes = Arrays.copyOf(outcomes, n * 2);
        keys = Arrays.copyOf(keys, n * 2);
      }
      starts[n] = start;
      ends[n] = end;
      remaining[n] = rem;
      outcomes[n] = (byte) o.ordinal();
      keys[n] = key;
      n++;
    }
  }

  /** Recorded calls, sorted by end time. */
  static final class Calls {
    final long[] starts;
    final long[] ends;
    final long[] remaining;
    final Outcome[] outcomes;
    /** The key of each call's first item. */
    final String[] keys;

    Calls(List<Recorder> recorders) {
      int total = recorders.stream().mapToInt(r -> r.n).sum();
      Integer[] order = new Integer[total];
      long[] s = new long[total];
      long[] e = new long[total];
      long[] rem = new long[total];
      Outcome[] o = new Outcome[total];
      String[] ks = new String[total];
      int k = 0;
      for (Recorder r : recorders) {
        for (int i = 0; i < r.n; i++, k++) {
          s[k] = r.starts[i];
          e[k] = r.ends[i];
          rem[k] = r.remaining[i];
          o[k] = Outcome.values()[r.outcomes[i]];
          ks[k] = r.keys[i];
          order[k] = k;
        }
      }
      Arrays.sort(order, (a, b) -> Long.compare(e[a], e[b]));
      starts = new long[total];
      ends = new long[total];
      remaining = new long[total];
      outcomes = new Outcome[total];
      keys = new String[total];
      for (int i = 0; i < total; i++) {
        keys[i] = ks[order[i]];
        starts[i] = s[order[i]];
        ends[i] = e[order[i]];
        remaining[i] = rem[order[i]];
        outcomes[i] = o[order[i]];
      }
    }

    int size() {
      return ends.length;
    }

    /** The calls that started within [from, to). */
    Calls startedBetween(long from, long to) {
      return filter(i -> starts[(int) i] >= from && starts[(int) i] < to);
    }

    /** The calls whose index {@code keep} accepts. */
    Calls filter(LongPredicate keep) {
      int[] idx = java.util.stream.IntStream.range(0, size()).filter(i -> keep.test(i)).toArray();
      Calls from = this;
      Calls c = new Calls(idx.length);
      for (int k = 0; k < idx.length; k++) {
        c.starts[k] = from.starts[idx[k]];
        c.ends[k] = from.ends[idx[k]];
        c.remaining[k] = from.remaining[idx[k]];
        c.outcomes[k] = from.outcomes[idx[k]];
        c.keys[k] = from.keys[idx[k]];
      }
      return c;
    }

    private Calls(int size) {
      starts = new long[size];
      ends = new long[size];
      remaining = new long[size];
      outcomes = new Outcome[size];
      keys = new String[size];
    }

    /** The calls whose first item's key is {@code key}. */
    Calls onKey(String key) {
      return filter(i -> key.equals(keys[(int) i]));
    }

    long count(Outcome o) {
      return Arrays.stream(outcomes).filter(x -> x == o).count();
    }

    long degraded() {
      return count(Outcome.DEGRADED_ALLOWED) + count(Outcome.DEGRADED_DENIED);
    }

    /** Decided by the store: allowed or denied, not degraded, no error. */
    static boolean byStore(Outcome o) {
      return o == Outcome.ALLOWED || o == Outcome.DENIED;
    }

    /** The end of the first call decided by the store that ended after {@code t}, or -1. */
    long firstStoreEndAfter(long t) {
      for (int i = 0; i < size(); i++) {
        if (ends[i] > t && byStore(outcomes[i])) {
          return ends[i];
        }
      }
      return -1;
    }

    /** The end of the last call decided by the store that ended before {@code t}, or -1. */
    long lastStoreEndBefore(long t) {
      for (int i = size() - 1; i >= 0; i--) {
        if (ends[i] < t && byStore(outcomes[i])) {
          return ends[i];
        }
      }
      return -1;
    }

    /** The end of the first call not decided by the store (degraded or failed) that ended after {@code t}, or -1. */
    long firstFailureEndAfter(long t) {
      for (int i = 0; i < size(); i++) {
        if (ends[i] > t && !byStore(outcomes[i])) {
          return ends[i];
        }
      }
      return -1;
    }

    /** The {@code q} quantile (0..1) of call latencies, in ms. */
    double latencyMs(double q) {
      if (size() == 0) {
        return 0;
      }
      long[] lat = new long[size()];
      for (int i = 0; i < size(); i++) {
        lat[i] = ends[i] - starts[i];
      }
      Arrays.sort(lat);
      int at = (int) Math.min(lat.length - 1, Math.ceil(q * lat.length) - 1);
      return lat[Math.max(0, at)] / 1e6;
    }

    /** "n calls: a allowed, d denied, da degraded-allowed, dd degraded-denied, e errors". */
    String summary() {
      return String.format("%d calls: %d allowed, %d denied, %d degraded-allowed, %d degraded-denied, %d errors",
          size(), count(Outcome.ALLOWED), count(Outcome.DENIED), count(Outcome.DEGRADED_ALLOWED),
          count(Outcome.DEGRADED_DENIED), count(Outcome.ERROR));
    }
  }
}
