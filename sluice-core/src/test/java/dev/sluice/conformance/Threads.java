package dev.sluice.conformance;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Runs a task on many threads at once and fails, with every thread's stack, if they do not all finish. */
public final class Threads {
  private Threads() {}

  @FunctionalInterface
  public interface Task {
    void run(int thread) throws Exception;
  }

  public static void runAll(int threads, Duration timeout, Task task) throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        int id = i;
        futures.add(pool.submit(() -> {
          task.run(id);
          return null;
        }));
      }
      long deadline = System.nanoTime() + timeout.toNanos();
      for (Future<?> f : futures) {
        try {
          f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          throw new AssertionError("threads did not finish within " + timeout + " (deadlock?):\n" + dump());
        } catch (ExecutionException e) {
          throw new AssertionError("a thread failed", e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static String dump() {
    StringBuilder sb = new StringBuilder();
    for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      sb.append(t);
    }
    return sb.toString();
  }
}
