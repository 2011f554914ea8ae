package dev.sluice.bench.lease;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * One application process of {@code LeaseLoad}, kept for the whole run. Per case it builds a
 * limiter embedding the library on the Redis store (a key prefix of the case's own), with one
 * driver thread offering {@code acquireAsync} decisions of one key, at most {@code inflight}
 * unanswered. It warms up, prints {@code READY}, warms on until the start the parent sends
 * ({@code GO <epoch ms>} on its input), offers its demand for the run's duration from then and
 * prints one {@code RESULT} line: its counts and, when paced, its admissions per millisecond of
 * the wall clock.
 */
public final class LeaseWorker {
  /** Admissions answered this long after the run are still recorded (their bins are not windowed). */
  public static final int TAIL_MS = 2_000;
  /** Wall-clock pacing step: fine against a 1 s window, coarse enough not to spin. */
  private static final long PACE_NANOS = 1_000_000;
  /** An unpaced driver yields this often so that, at real-time priority, it does not starve the rest. */
  private static final int YIELD_EVERY = 256;
  /** Warm-up before the worker says it is ready; it goes on warming until the run's start. */
  private static final long WARM_MS = 1_000;

  private LeaseWorker() {}

  /** What one phase (warm-up or run) counted. */
  static final class Counters {
    final LongAdder decisions = new LongAdder();
    final LongAdder admitted = new LongAdder();
    final LongAdder denied = new LongAdder();
    final LongAdder errors = new LongAdder();
    /** Decisions the rule's failure mode made because the store did not answer in time. */
    final LongAdder degraded = new LongAdder();
    long offered;
    long dropped;
    /**
     * Admissions per millisecond from the start, by the time the request was sent and by the time
     * its answer came, or null when not recorded. The store stamps an admission with its own
     * clock (Redis: TIME, the same machine's wall clock) between the two; a leased admission is
     * answered when it is sent.
     */
    final AtomicIntegerArray sentPerMs;
    final AtomicIntegerArray answeredPerMs;
    final long startEpochMs;

    Counters(int bins, long startEpochMs) {
      this.sentPerMs = bins > 0 ? new AtomicIntegerArray(bins) : null;
      this.answeredPerMs = bins > 0 ? new AtomicIntegerArray(bins) : null;
      this.startEpochMs = startEpochMs;
    }

    /** Answers by milliseconds after the request was sent, the last bin for a second or more. */
    final AtomicIntegerArray lagMs = new AtomicIntegerArray(1001);

    void answered(long sentEpochMs, Decision d, Throwable err) {
      if (sentPerMs != null) {
        lagMs.incrementAndGet((int) Math.min(1000, Math.max(0, System.currentTimeMillis() - sentEpochMs)));
      }
      if (err != null) {
        errors.increment();
        return;
      }
      decisions.increment();
      if (d.degraded()) {
        degraded.increment();
      }
      if (d.allowed()) {
        admitted.increment();
        if (sentPerMs != null) {
          record(sentPerMs, sentEpochMs);
          record(answeredPerMs, System.currentTimeMillis());
        }
      } else {
        denied.increment();
      }
    }

    private void record(AtomicIntegerArray bins, long epochMs) {
      long bin = epochMs - startEpochMs;
      if (bin >= 0 && bin < bins.length()) {
        bins.incrementAndGet((int) bin);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    timeShareCompilers();
    AtomicLong go = new AtomicLong(Long.MAX_VALUE);
    BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> read(go, commands), "commands");
    reader.setDaemon(true);
    reader.start();
    for (String line = commands.take(); line.startsWith("CASE "); line = commands.take()) {
      go.set(Long.MAX_VALUE);
      runCase(WorkerSpec.parse(List.of(line.substring(5).trim().split(" "))), go);
    }
  }

  /**
   * At real-time priority (SCHED_FIFO, inherited from the parent) a JIT compiler thread runs until
   * it blocks, tens of milliseconds per compilation, and the event loops waiting behind it on its
   * core answer that much later (tried: answers 200–300 ms late at the 99th percentile). The
   * compiler threads (a fixed set: the parent turns dynamic ones off) are time-shared instead.
   */
  private static void timeShareCompilers() throws IOException, InterruptedException {
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : tasks.toList()) {
        String name = Files.readString(task.resolve("comm")).trim();
        if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
          new ProcessBuilder("chrt", "-o", "-p", "0", task.getFileName().toString()).inheritIO().start().waitFor();
        }
      }
    } catch (IOException e) {
      System.err.println("compiler threads keep their scheduling: " + e);
    }
  }

  private static void runCase(WorkerSpec spec, AtomicLong go) throws InterruptedException {
    try (RedisStore store = RedisStore.builder(spec.uri()).prefix(spec.prefix()).build();
        RateLimiter limiter = Sluice.builder().rules(spec.rule()).store(store).build()) {
      Semaphore permits = new Semaphore(spec.inflight());
      // Paced runs warm up on another key, so the measured key starts empty at the start; an
      // unpaced run warms up on its own key and counts from the start.
      String warmKey = spec.paced() ? spec.key() + ":warm" : spec.key();
      Counters warm = new Counters(0, 0);
      long warmed = System.currentTimeMillis() + WARM_MS;
      drive(limiter, spec, warmKey, warm, permits, () -> warmed);
      System.out.println("READY");
      System.out.flush();
      drive(limiter, spec, warmKey, warm, permits, go::get);
      long start = go.get();
      if (System.currentTimeMillis() > start + 5) {
        System.err.println("worker " + ProcessHandle.current().pid() + " started its run late");
      }
      Counters run = new Counters(spec.paced() ? spec.durationMs() + TAIL_MS : 0, start);
      drive(limiter, spec, spec.key(), run, permits, () -> start + spec.durationMs());
      if (!permits.tryAcquire(spec.inflight(), 10, TimeUnit.SECONDS)) {
        System.err.println("requests still unanswered 10 s after the run");
      }
      System.out.println(result(run));
      System.out.flush();
    }
  }

  /**
   * The parent's commands on the input: {@code CASE name=value …} starts a case; {@code GO <epoch
   * ms>}, sent once every worker is ready, is the run's common start; anything else, or the end
   * of the input, ends the worker after the case in progress.
   */
  private static void read(AtomicLong go, BlockingQueue<String> commands) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.startsWith("GO ")) {
          go.set(Long.parseLong(line.substring(3).trim()));
        } else {
          commands.add(line);
        }
      }
    } catch (IOException | NumberFormatException e) {
      System.err.println("the parent's commands failed: " + e);
    }
    commands.add("END");
    go.set(0);
  }

  /** Offers the spec's demand of {@code key} from now until {@code endEpochMs} into {@code c}. */
  private static void drive(RateLimiter limiter, WorkerSpec spec, String key, Counters c, Semaphore permits,
      LongSupplier endEpochMs) throws InterruptedException {
    Request request = Request.of("api", key);
    long start = System.nanoTime();
    if (!spec.paced()) {
      long n = 0;
      while (System.currentTimeMillis() < endEpochMs.getAsLong()) {
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
    while (System.currentTimeMillis() < endEpochMs.getAsLong()) {
      long due = spec.due(System.nanoTime() - start);
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
    long sent = c.sentPerMs == null ? 0 : System.currentTimeMillis();
    CompletionStage<Decision> answer;
    try {
      answer = limiter.acquireAsync(request);
    } catch (RuntimeException e) {
      permits.release();
      c.answered(sent, null, e);
      return;
    }
    answer.whenComplete((d, err) -> {
      permits.release();
      c.answered(sent, d, err);
    });
  }

  private static String result(Counters c) {
    StringBuilder b = new StringBuilder("RESULT");
    b.append(" decisions=").append(c.decisions.sum()).append(" admitted=").append(c.admitted.sum())
        .append(" denied=").append(c.denied.sum()).append(" errors=").append(c.errors.sum())
        .append(" degraded=").append(c.degraded.sum())
        .append(" offered=").append(c.offered).append(" dropped=").append(c.dropped);
    if (c.sentPerMs != null) {
      b.append(" lagP50=").append(quantile(c.lagMs, 0.5)).append(" lagP99=").append(quantile(c.lagMs, 0.99))
          .append(" lagP999=").append(quantile(c.lagMs, 0.999)).append(" lagMax=").append(quantile(c.lagMs, 1));
      b.append(" sent=").append(join(c.sentPerMs)).append(" answered=").append(join(c.answeredPerMs));
    }
    return b.toString();
  }

  private static String join(AtomicIntegerArray bins) {
    StringJoiner j = new StringJoiner(",");
    for (int i = 0; i < bins.length(); i++) {
      j.add(Integer.toString(bins.get(i)));
    }
    return j.toString();
  }

  /** The answer lag in ms at quantile {@code q} (1: the largest), 1000 meaning a second or more. */
  private static int quantile(AtomicIntegerArray hist, double q) {
    long total = 0;
    for (int i = 0; i < hist.length(); i++) {
      total += hist.get(i);
    }
    long rank = Math.max(1, (long) Math.ceil(q * total));
    long seen = 0;
    for (int i = 0; i < hist.length(); i++) {
      seen += hist.get(i);
      if (seen >= rank) {
        return i;
      }
    }
    return 0;
  }
}
