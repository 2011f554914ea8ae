package dev.sluice.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * One thread deciding for one key, timed by the thread's own CPU time rather than the wall clock:
 * on a machine shared with other work (where JMH's wall-clock averages move by tens of percent
 * from one run to the next) time spent descheduled is not counted. Prints the median, minimum
 * and maximum nanoseconds per decision over blocks of 2,000,000 decisions, after five blocks of
 * warm-up. Run one contender per JVM, alternating, so that each JVM compiles one implementation:
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.CpuTimePerDecision sluice TWO_WINDOWS 30
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.CpuTimePerDecision bucket4j TWO_WINDOWS 30
 * </pre>
 *
 * Arguments: contender (as in {@link Contender#named}), rule shape ({@link RuleShape}), blocks.
 */
public final class CpuTimePerDecision {
  private static final int BLOCK = 2_000_000;
  private static volatile boolean sink;

  private CpuTimePerDecision() {}

  public static void main(String[] args) {
    if (args.length != 3) {
      System.err.println("usage: CpuTimePerDecision <contender> <rule shape> <blocks>");
      System.exit(2);
    }
    Contender contender = Contender.named(args[0]);
    RuleShape shape = RuleShape.valueOf(args[1]);
    int blocks = Integer.parseInt(args[2]);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    String key = "user:0";
    key.hashCode(); // cached, as in AcquireBenchmark
    double[] nanos = new double[blocks];
    boolean x = false;
    try (KeyedLimiter limiter = contender.create(shape)) {
      for (int w = 0; w < 5; w++) {
        for (int i = 0; i < BLOCK; i++) {
          x ^= limiter.tryAcquire(key);
        }
      }
      for (int b = 0; b < blocks; b++) {
        long start = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < BLOCK; i++) {
          x ^= limiter.tryAcquire(key);
        }
        nanos[b] = (threads.getCurrentThreadCpuTime() - start) / (double) BLOCK;
      }
    }
    sink = x;
    Arrays.sort(nanos);
    System.out.printf("%s %s: median %.1f ns of CPU per decision (min %.1f, max %.1f, %d blocks)%n",
        args[0], args[1], nanos[blocks / 2], nanos[0], nanos[blocks - 1], blocks);
  }
}
