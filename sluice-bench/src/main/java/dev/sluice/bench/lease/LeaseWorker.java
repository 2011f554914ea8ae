package dev.sluice.bench.lease;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * One application process of {@code LeaseLoad}: a limiter embedding the library on the Redis store,
 * one driver thread offering {@code acquireAsync} decisions of one key, at most {@code inflight}
 * unanswered. It warms up until the run's start, then offers its demand for the run's duration
 * and prints one {@code RESULT} line: its counts and, when paced, its admissions per millisecond
 * of the wall clock.
 */
public final class LeaseWorker {
  /** Admissions answered this long after the run are still recorded (their bins are not windowed). */
  static final int TAIL_MS = 2_000;
  /** Wall-clock pacing step: fine against a 1 s window, coarse enough not to spin. */
  private static final long PACE_NANOS = 250_000;
  /** An unpaced driver yields this often so that, at real-time priority, it does not starve the rest. */
  private static final int YIELD_EVERY = 256;

  private LeaseWorker() {}

  /** What one phase (warm-up or run) counted. */
  static final class Counters {
    final LongAdder decisions = new LongAdder();
    final LongAdder admitted = new LongAdder();
    final LongAdder denied = new LongAdder();
    final LongAdder errors = new LongAdder();
    long offered;
    long dropped;
    /** Admissions per wall-clock millisecond from the start, or null when not recorded. */
    final AtomicIntegerArray perMs;
    final long startEpochMs;

    Counters(int bins, long startEpochMs) {
      this.perMs = bins > 0 ? new AtomicIntegerArray(bins) : null;
      this.startEpochMs = startEpochMs;
    }

    void answered(Decision d, Throwable err) {
      if (err != null) {
        errors.increment();
        return;
      }
      decisions.increment();
      if (d.allowed()) {
        admitted.increment();
        if (perMs != null) {
          // Redis stamps with the same machine's wall clock (TIME); an answer lags its stamp by the
          // round trip, a leased admission not at all.
          long bin = System.currentTimeMillis() - startEpochMs;
          if (bin >= 0 && bin < perMs.length()) {
            perMs.incrementAndGet((int) bin);
          }
        }
      } else {
        denied.increment();
      }
    }
  }

  public static void main(String[] args) throws Exception {
    WorkerSpec spec = WorkerSpec.parse(List.of(args));
    try (RedisStore store = RedisStore.builder(spec.uri()).prefix(spec.prefix()).build();
        RateLimiter limiter = Sluice.builder().rules(spec.rule()).store(store).build()) {
      Semaphore permits = new Semaphore(spec.inflight());
      long warmUntil = spec.startEpochMs();
      if (System.currentTimeMillis() >= warmUntil) {
        System.err.println("worker started after the run's start: its warm-up is lost");
      }
      // Paced runs warm up on another key, so the measured key starts empty at the start; an
      // unpaced run warms up on its own key and counts from the start.
      Counters warm = new Counters(0, warmUntil);
      drive(limiter, spec, spec.paced() ? spec.key() + ":warm" : spec.key(), warm, permits,
          warmUntil - System.currentTimeMillis());
      Counters run = new Counters(spec.paced() ? spec.durationMs() + TAIL_MS : 0, spec.startEpochMs());
      drive(limiter, spec, spec.key(), run, permits, spec.durationMs());
      if (!permits.tryAcquire(spec.inflight(), 10, TimeUnit.SECONDS)) {
        System.err.println("requests still unanswered 10 s after the run");
      }
      System.out.println(result(run));
      System.out.flush();
    }
  }

  /** Offers the spec's demand of {@code key} for {@code millis} from now into {@code c}. */
  private static void drive(RateLimiter limiter, WorkerSpec spec, String key, Counters c, Semaphore permits,
      long millis) throws InterruptedException {
    if (millis <= 0) {
      return;
    }
    Request request = Request.of("api", key);
    long start = System.nanoTime();
    long end = start + millis * 1_000_000L;
    if (!spec.paced()) {
      long n = 0;
      while (System.nanoTime() < end) {
        if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          continue;
        }
        send(limiter, request, c, permits);
        c.offered++;
        if (++n % YIELD_EVERY == 0) {
          Thread.yield();
        }
      }
      return;
    }
    long issued = 0;
    for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
      long due = spec.due(now - start);
      while (issued < due) {
        if (!permits.tryAcquire()) {
          // The demand not offered while the store is behind: counted, never queued without bound.
          c.dropped += due - issued;
          issued = due;
          break;
        }
        send(limiter, request, c, permits);
        issued++;
        c.offered++;
      }
      LockSupport.parkNanos(PACE_NANOS);
    }
  }

  private static void send(RateLimiter limiter, Request request, Counters c, Semaphore permits) {
    CompletionStage<Decision> answer;
    try {
      answer = limiter.acquireAsync(request);
    } catch (RuntimeException e) {
      permits.release();
      c.answered(null, e);
      return;
    }
    answer.whenComplete((d, err) -> {
      permits.release();
      c.answered(d, err);
    });
  }

  private static String result(Counters c) {
    StringBuilder b = new StringBuilder("RESULT");
    b.append(" decisions=").append(c.decisions.sum()).append(" admitted=").append(c.admitted.sum())
        .append(" denied=").append(c.denied.sum()).append(" errors=").append(c.errors.sum())
        .append(" offered=").append(c.offered).append(" dropped=").append(c.dropped);
    if (c.perMs != null) {
      StringJoiner j = new StringJoiner(",");
      for (int i = 0; i < c.perMs.length(); i++) {
        j.add(Integer.toString(c.perMs.get(i)));
      }
      b.append(" perMs=").append(j);
    }
    return b.toString();
  }
}
