package dev.sluice.bench;

import dev.sluice.internal.policy.DenialSketch;
import dev.sluice.internal.policy.MinuteSketches;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The cost of counting one denial for "top offenders", on a sketch of 128 entries: the sketch
 * alone ({@code add}: each thread its own sketch, no lock), one sketch shared by every thread under
 * a lock ({@code addLocked}), and the per-rule, per-minute rings as the limiter records into them
 * ({@code record}: one rule, so every thread takes the same lock).
 *
 * <p>Keys: 10,000 distinct, drawn with a Zipf law of exponent 1 ({@code zipf}: the usual shape of
 * abuse, most denials on a few keys, most adds finding their key held) or uniformly
 * ({@code uniform}: nearly every add evicts the smallest entry, the sketch's worst case).
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -jar sluice-bench/target/sluice-bench.jar DenialSketchBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -t 1
 * java -jar sluice-bench/target/sluice-bench.jar DenialSketchBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -t 2
 * </pre>
 *
 * On a machine shared with other work, {@link #main} times the same operations by each thread's
 * CPU time instead (time descheduled is not counted): median, minimum and maximum nanoseconds per
 * operation over blocks of 1,000,000, after five blocks of warm-up, for each thread:
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.DenialSketchBenchmark add zipf 1 20
 * </pre>
 *
 * Arguments: operation ({@code add}, {@code addLocked}, {@code record}), keys ({@code zipf},
 * {@code uniform}), threads, blocks.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DenialSketchBenchmark {
  private static final int DISTINCT_KEYS = 10_000;
  /** A power of two: the draw is a mask, not a modulo. */
  private static final int SEQUENCE = 1 << 16;
  private static final long NOW_MICROS = 1_700_000_000_000_000L;

  @State(Scope.Benchmark)
  public static class Shared {
    @Param({"zipf", "uniform"})
    public String keys;

    @Param({"128"})
    public int capacity;

    String[] sequence;
    DenialSketch sketch;
    final Object lock = new Object();
    MinuteSketches minutes;

    @Setup
    public void setUp() {
      String[] names = new String[DISTINCT_KEYS];
      for (int i = 0; i < DISTINCT_KEYS; i++) {
        names[i] = "ip:10." + (i >> 8 & 0xff) + "." + (i & 0xff) + ".7";
        names[i].hashCode(); // cached, as a key's hash is by the time the limiter has used it
      }
      double[] cumulative = new double[DISTINCT_KEYS];
      double sum = 0;
      for (int i = 0; i < DISTINCT_KEYS; i++) {
        sum += keys.equals("zipf") ? 1.0 / (i + 1) : 1.0;
        cumulative[i] = sum;
      }
      Random random = new Random(42);
      sequence = new String[SEQUENCE];
      for (int i = 0; i < SEQUENCE; i++) {
        int at = java.util.Arrays.binarySearch(cumulative, random.nextDouble() * sum);
        sequence[i] = names[Math.min(DISTINCT_KEYS - 1, at >= 0 ? at : -at - 1)];
      }
      sketch = new DenialSketch(capacity);
      minutes = new MinuteSketches(capacity, MinuteSketches.DEFAULT_MAX_RULES);
      // Warm so that the measured adds find a full sketch, as they would after a minute's start.
      for (String k : sequence) {
        sketch.add(k, 1);
        minutes.record("api", k, 1, NOW_MICROS);
      }
    }
  }

  @State(Scope.Thread)
  public static class PerThread {
    DenialSketch sketch;
    int next;

    @Setup
    public void setUp(Shared shared) {
      sketch = new DenialSketch(shared.capacity);
      for (String k : shared.sequence) {
        sketch.add(k, 1);
      }
      // Threads walk the sequence from different places.
      next = (int) (Thread.currentThread().getId() * 7919) & (SEQUENCE - 1);
    }

    String key(Shared shared) {
      return shared.sequence[next++ & (SEQUENCE - 1)];
    }
  }

  @Benchmark
  public void add(Shared shared, PerThread t) {
    t.sketch.add(t.key(shared), 1);
  }

  @Benchmark
  public void addLocked(Shared shared, PerThread t) {
    String key = t.key(shared);
    synchronized (shared.lock) {
      shared.sketch.add(key, 1);
    }
  }

  @Benchmark
  public void record(Shared shared, PerThread t) {
    shared.minutes.record("api", t.key(shared), 1, NOW_MICROS);
  }

  private static final int BLOCK = 1_000_000;

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: DenialSketchBenchmark <add|addLocked|record> <zipf|uniform> <threads> <blocks>");
      System.exit(2);
    }
    String op = args[0];
    Shared shared = new Shared();
    shared.keys = args[1];
    shared.capacity = DenialSketch.DEFAULT_CAPACITY;
    shared.setUp();
    int threads = Integer.parseInt(args[2]);
    int blocks = Integer.parseInt(args[3]);
    DenialSketchBenchmark bench = new DenialSketchBenchmark();
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    CyclicBarrier start = new CyclicBarrier(threads);
    String[] lines = new String[threads];
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int me = t;
      workers[t] = new Thread(() -> {
        PerThread state = new PerThread();
        state.setUp(shared);
        Runnable one = switch (op) {
          case "add" -> () -> bench.add(shared, state);
          case "addLocked" -> () -> bench.addLocked(shared, state);
          case "record" -> () -> bench.record(shared, state);
          default -> throw new IllegalArgumentException("unknown operation " + op);
        };
        try {
          start.await();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        for (int w = 0; w < 5; w++) {
          for (int i = 0; i < BLOCK; i++) {
            one.run();
          }
        }
        double[] nanos = new double[blocks];
        for (int b = 0; b < blocks; b++) {
          long cpu = mx.getCurrentThreadCpuTime();
          for (int i = 0; i < BLOCK; i++) {
            one.run();
          }
          nanos[b] = (mx.getCurrentThreadCpuTime() - cpu) / (double) BLOCK;
        }
        Arrays.sort(nanos);
        lines[me] = String.format("%s %s, %d thread(s), thread %d: median %.1f ns of CPU per operation"
            + " (min %.1f, max %.1f, %d blocks)", op, shared.keys, threads, me, nanos[blocks / 2], nanos[0],
            nanos[blocks - 1], blocks);
      });
      workers[t].start();
    }
    for (Thread w : workers) {
      w.join();
    }
    for (String line : lines) {
      System.out.println(line);
    }
  }
}
