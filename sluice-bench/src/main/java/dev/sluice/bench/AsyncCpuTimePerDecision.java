package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * The asynchronous API on the memory store as a caller that keeps 64 decisions in flight uses it
 * (64 calls issued, then their answers read), timed by the thread's CPU time as {@link
 * CpuTimePerDecision} is, with the bytes it allocates: {@code acquireAsync}, which builds every
 * window's state for each decision, against {@code tryAcquireAsync}, which answers yes or no.
 * Prints the median, minimum and maximum over blocks of 1,280,000 decisions, after five blocks of
 * warm-up. Run one API per JVM, alternating:
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.AsyncCpuTimePerDecision acquireAsync TWO_WINDOWS 10000 15
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.AsyncCpuTimePerDecision tryAcquireAsync TWO_WINDOWS 10000 15
 * </pre>
 *
 * Arguments: API, rule shape ({@link RuleShape}), keys (picked uniformly at random), blocks.
 */
public final class AsyncCpuTimePerDecision {
  private static final int IN_FLIGHT = 64;
  private static final int BLOCK = 20_000 * IN_FLIGHT;
  private static final String RULE = "auth.createToken";
  private static volatile int sink;

  private AsyncCpuTimePerDecision() {}

  public static void main(String[] args) {
    if (args.length != 4 || !(args[0].equals("acquireAsync") || args[0].equals("tryAcquireAsync"))) {
      System.err.println("usage: AsyncCpuTimePerDecision acquireAsync|tryAcquireAsync <rule shape> <keys> <blocks>");
      System.exit(2);
    }
    boolean yesOrNo = args[0].equals("tryAcquireAsync");
    Rule.Builder b = Rule.builder(RULE).algorithm(Algorithm.SLIDING_LOG);
    for (RuleShape.Limit l : RuleShape.valueOf(args[1]).limits()) {
      b.window(l.limit(), l.period());
    }
    String[] keys = new String[Integer.parseInt(args[2])];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "user:" + i;
      keys[i].hashCode(); // cached, as in AcquireBenchmark
    }
    int blocks = Integer.parseInt(args[3]);
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long self = Thread.currentThread().getId();
    SplittableRandom random = new SplittableRandom(42);
    double[] nanos = new double[blocks];
    double[] bytes = new double[blocks];
    int admitted = 0;
    try (RateLimiter limiter = Sluice.builder().rules(b.build()).build()) {
      for (int w = 0; w < 5; w++) {
        admitted += block(limiter, yesOrNo, keys, random);
      }
      for (int n = 0; n < blocks; n++) {
        long cpu = threads.getCurrentThreadCpuTime();
        long allocated = threads.getThreadAllocatedBytes(self);
        admitted += block(limiter, yesOrNo, keys, random);
        nanos[n] = (threads.getCurrentThreadCpuTime() - cpu) / (double) BLOCK;
        bytes[n] = (threads.getThreadAllocatedBytes(self) - allocated) / (double) BLOCK;
      }
    }
    sink = admitted;
    Arrays.sort(nanos);
    Arrays.sort(bytes);
    System.out.printf("%s %s %s keys: median %.1f ns of CPU per decision (min %.1f, max %.1f), %.0f bytes allocated"
        + " per decision, %d blocks%n", args[0], args[1], args[2], nanos[blocks / 2], nanos[0], nanos[blocks - 1],
        bytes[blocks / 2], blocks);
  }

  private static int block(RateLimiter limiter, boolean yesOrNo, String[] keys, SplittableRandom random) {
    CompletableFuture<?>[] inFlight = new CompletableFuture<?>[IN_FLIGHT];
    int admitted = 0;
    for (int done = 0; done < BLOCK; done += IN_FLIGHT) {
      for (int i = 0; i < IN_FLIGHT; i++) {
        String key = keys[keys.length == 1 ? 0 : random.nextInt(keys.length)];
        inFlight[i] = yesOrNo
            ? limiter.tryAcquireAsync(RULE, key).toCompletableFuture()
            : limiter.acquireAsync(Request.of(RULE, key)).toCompletableFuture();
      }
      for (CompletableFuture<?> f : inFlight) {
        Object answer = f.join();
        admitted += (answer instanceof Boolean yes ? yes : ((Decision) answer).allowed()) ? 1 : 0;
      }
    }
    return admitted;
  }
}
