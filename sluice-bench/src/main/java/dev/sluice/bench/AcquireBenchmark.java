package dev.sluice.bench;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One decision for one key through {@link KeyedLimiter}, in nanoseconds per decision per thread.
 * Subclasses choose the contenders and rules; {@code keys} is the number of distinct keys, picked
 * uniformly at random by each thread. Run the subclasses, with {@code -t} for threads.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public abstract class AcquireBenchmark {
  private KeyedLimiter limiter;
  private String[] keys;

  abstract String impl();

  abstract String rule();

  abstract int keyCount();

  @Setup(Level.Trial)
  public void setUp() {
    limiter = Contender.named(impl()).create(RuleShape.valueOf(rule()));
    keys = new String[keyCount()];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "user:" + i;
      keys[i].hashCode(); // cached now, as it would be for a key that came off the wire once
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    limiter.close();
  }

  /** Each thread's own cheap random stream of key indices. */
  @State(Scope.Thread)
  public static class Cursor {
    private long x = ThreadLocalRandom.current().nextLong() | 1;

    int next(int bound) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      return (int) (((x >>> 32) * bound) >>> 32);
    }
  }

  @Benchmark
  public boolean acquire(Cursor c) {
    return limiter.tryAcquire(keys[c.next(keys.length)]);
  }
}
