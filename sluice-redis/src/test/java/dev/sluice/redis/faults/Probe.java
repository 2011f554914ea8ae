package dev.sluice.redis.faults;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/** What a fault test reads of its own process, and waiting for conditions of the network. */
final class Probe {
  private Probe() {}

  /** Live threads of this JVM. */
  static int threads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  /** Open file descriptors of this process ({@code /proc/self/fd}). */
  static long fileDescriptors() {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    } catch (IOException e) {
      throw new AssertionError("cannot list /proc/self/fd (Linux only)", e);
    }
  }

  /** Polls a condition every 20 ms; returns the ms it took, or fails naming it after {@code timeoutMs}. */
  static long await(String what, long timeoutMs, BooleanSupplier condition) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeoutMs + " ms waiting for " + what);
      }
      Thread.sleep(20);
    }
    return ms(System.nanoTime() - start);
  }

  static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /** A figure line in the build log: {@code FAULT <name>: <figures>}. */
  static void figures(String name, String figures) {
    System.out.println("FAULT " + name + ": " + figures);
  }
}
