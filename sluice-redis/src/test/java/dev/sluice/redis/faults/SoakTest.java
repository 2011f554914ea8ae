package dev.sluice.redis.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.faults.Traffic.Outcome;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A soak: mixed traffic on one Redis server for a while — every algorithm and failure mode,
 * single and multi-item requests, resets, keys drifting through a much larger space than is live
 * at once — while the process's heap after a full GC, its threads and file descriptors, and the
 * server's keyspace are sampled. They must stay flat: the last quarter of the run no higher than
 * the first (after a warm-up as long as the longest TTL) plus a small slack, and the keyspace
 * within the keys touched within a TTL.
 *
 * <p>Two minutes by default (CI); {@code -Dsluice.soak.minutes=30} for the long mode.
 */
class SoakTest {
  /** Its own server: the keyspace is measured. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  static final double MINUTES = Double.parseDouble(System.getProperty("sluice.soak.minutes", "2"));
  static final long SAMPLE_EVERY_MS = 5_000;
  /** Longer than the longest TTL (a 10 s window, a bucket of it and 1 s of slack), so the keyspace is full. */
  static final long WARM_UP_MS = 15_000;
  /** Keys live at once per rule; the window moves by {@link #DRIFT_PER_SECOND} keys a second. */
  static final int LIVE_KEYS = 10_000;
  static final int DRIFT_PER_SECOND = 100;
  /** The longest TTL, and how late Redis's active expiry may remove a key after it. */
  static final long TTL_MS = 12_000;
  static final long EXPIRY_LAG_MS = 5_000;

  static final List<Rule> RULES = List.of(
      Rule.builder("soak.log").window(20, Duration.ofSeconds(10)).window(5, Duration.ofSeconds(1))
          .failureMode(FailureMode.OPEN).build(),
      Rule.builder("soak.window").algorithm(Algorithm.SLIDING_WINDOW).precision(10)
          .window(100, Duration.ofSeconds(10)).failureMode(FailureMode.CLOSED).build(),
      Rule.builder("soak.fixed").algorithm(Algorithm.FIXED_WINDOW).window(50, Duration.ofSeconds(5))
          .failureMode(FailureMode.LOCAL).build(),
      Rule.builder("soak.bucket").algorithm(Algorithm.TOKEN_BUCKET).window(10, Duration.ofSeconds(1)).build(),
      Rule.builder("soak.leaky").algorithm(Algorithm.LEAKY_BUCKET).window(10, Duration.ofSeconds(1))
          .maxWait(Duration.ofMillis(200)).build());

  /** One sample of the process and the server. */
  record Sample(long atMs, double heapMb, int threads, long fds, long keys, double redisMb, long decisions) {}

  final long startedAt = System.nanoTime();

  /** A key of the live window: it drifts by {@link #DRIFT_PER_SECOND} a second. */
  String key() {
    long base = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedAt) * DRIFT_PER_SECOND;
    return "u" + (base + ThreadLocalRandom.current().nextInt(LIVE_KEYS));
  }

  Request next() {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int n = r.nextInt(10) < 7 ? 1 : 2 + r.nextInt(2);
    if (n == 1) {
      return Request.of(RULES.get(r.nextInt(RULES.size())).name(), key());
    }
    // Several rules, on one key (one caller's request) or on keys of their own.
    List<Item> items = new ArrayList<>();
    String shared = r.nextBoolean() ? key() : null;
    int first = r.nextInt(RULES.size());
    for (int i = 0; i < n; i++) {
      items.add(Item.of(RULES.get((first + i) % RULES.size()).name(), shared != null ? shared : key()));
    }
    return Request.of(items);
  }

  @Test
  void heapThreadsFileDescriptorsAndKeyspaceStayFlatUnderMixedTraffic() throws Exception {
    long durationMs = (long) (MINUTES * 60_000);
    assertThat(durationMs).as("sluice.soak.minutes: at least a minute").isGreaterThanOrEqualTo(60_000);
    ModeListener listener = new ModeListener(RULES.toArray(Rule[]::new));
    RedisStore store = RedisStore.connect(redis.get().uri());
    List<Sample> samples = new ArrayList<>();
    AtomicLong resets = new AtomicLong();
    AtomicLong resetErrors = new AtomicLong();
    long decisions;
    try (RateLimiter limiter = Sluice.builder().rules(RULES.toArray(Rule[]::new)).store(store).listener(listener)
        .build()) {
      Traffic traffic = new Traffic(limiter, 500, false).lane("mixed", 4, this::next).start();
      AtomicBoolean running = new AtomicBoolean(true);
      Thread resetter = new Thread(() -> {
        while (running.get()) {
          try {
            limiter.reset(RULES.get(ThreadLocalRandom.current().nextInt(RULES.size())).name(), key())
                .toCompletableFuture().get(1, TimeUnit.SECONDS);
            resets.incrementAndGet();
            Thread.sleep(5);
          } catch (InterruptedException e) {
            return;
          } catch (Exception e) {
            resetErrors.incrementAndGet();
          }
        }
      }, "soak-resets");
      resetter.setDaemon(true);
      resetter.start();
      try {
        Thread.sleep(WARM_UP_MS);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(durationMs - WARM_UP_MS);
        while (System.nanoTime() < end) {
          samples.add(sample(traffic));
          Thread.sleep(SAMPLE_EVERY_MS);
        }
        samples.add(sample(traffic));
      } finally {
        running.set(false);
        resetter.interrupt();
        resetter.join(5_000);
        traffic.close();
      }
      decisions = traffic.count(Outcome.ALLOWED) + traffic.count(Outcome.DENIED) + traffic.count(Outcome.DEGRADED_ALLOWED)
          + traffic.count(Outcome.DEGRADED_DENIED);
      long degraded = traffic.count(Outcome.DEGRADED_ALLOWED) + traffic.count(Outcome.DEGRADED_DENIED);
      long errors = traffic.count(Outcome.ERROR);

      List<Sample> first = samples.subList(0, Math.max(1, samples.size() / 4));
      List<Sample> last = samples.subList(samples.size() - Math.max(1, samples.size() / 4), samples.size());
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedAt);
      long touched = RULES.size() * (LIVE_KEYS + seconds * DRIFT_PER_SECOND);
      long keyBound = RULES.size() * (LIVE_KEYS + DRIFT_PER_SECOND * (TTL_MS + EXPIRY_LAG_MS) / 1000);
      long mostKeys = samples.stream().mapToLong(Sample::keys).max().orElseThrow();
      Probe.figures("soak", String.format("%d s (%d s warm-up), %d decisions (%.0f/s), %d degraded, %d errors, %d resets;"
          + " averages of the first and last quarters of %d samples: heap after GC %.1f → %.1f MB, threads %.1f → %.1f,"
          + " file descriptors %.1f → %.1f, Redis keys %.0f → %.0f (%.1f → %.1f s of decisions; at most %d; bound %d; %d distinct keys touched),"
          + " Redis used memory %.1f → %.1f MB; store errors: %s", seconds, WARM_UP_MS / 1000, decisions,
          decisions / (double) seconds, degraded, errors, resets.get(), samples.size(), avg(first, Sample::heapMb),
          avg(last, Sample::heapMb), avg(first, Sample::threads), avg(last, Sample::threads), avg(first, Sample::fds),
          avg(last, Sample::fds), avg(first, Sample::keys), avg(last, Sample::keys), lifetimeSeconds(first),
          lifetimeSeconds(last), mostKeys, keyBound, touched,
          avg(first, Sample::redisMb), avg(last, Sample::redisMb), listener.errorKinds()));
      for (Sample s : samples) {
        System.out.println("SOAK sample " + s);
      }

      assertThat(errors).as("exceptions thrown to callers").isZero();
      assertThat(resetErrors.get()).as("failed resets").isZero();
      assertThat(degraded).as("degraded decisions of %d, on a healthy server", decisions)
          .isLessThanOrEqualTo(decisions / 1_000);
      assertThat(avg(last, Sample::heapMb)).as("heap after GC, MB: last quarter against the first")
          .isLessThanOrEqualTo(avg(first, Sample::heapMb) * 1.2 + 8);
      assertThat(avg(last, Sample::threads)).as("live threads").isLessThanOrEqualTo(avg(first, Sample::threads) + 2);
      assertThat(avg(last, Sample::fds)).as("open file descriptors").isLessThanOrEqualTo(avg(first, Sample::fds) + 5);
      assertThat(mostKeys).as("Redis keys: at most those touched within a TTL").isLessThanOrEqualTo(keyBound);
      // A key lives about a TTL past its last use, so the number of keys follows the decision
      // rate, which a shared machine can change tenfold within a long run. Growth is judged on
      // the keys' effective lifetime — keys held per decision per second — which a leak would
      // lengthen whatever the rate.
      assertThat(lifetimeSeconds(last)).as("Redis keys per decision per second (s): last quarter against the first")
          .isLessThanOrEqualTo(lifetimeSeconds(first) * 1.5 + 2);
      assertThat(mostKeys).as("keys expire: far fewer than were ever touched").isLessThan(touched);
    }
  }

  private Sample sample(Traffic traffic) {
    System.gc();
    double heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1e6;
    long keys = (Long) redis.get().command("DBSIZE");
    String memory = String.valueOf(redis.get().command("INFO", "memory"));
    double redisMb = 0;
    for (String line : memory.split("\r?\n")) {
      if (line.startsWith("used_memory:")) {
        redisMb = Long.parseLong(line.substring("used_memory:".length()).trim()) / 1e6;
      }
    }
    return new Sample(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt), heap, Probe.threads(),
        Probe.fileDescriptors(), keys, redisMb, traffic.count(Outcome.ALLOWED) + traffic.count(Outcome.DENIED));
  }

  /** Average keys held over {@code samples}, per decision per second between their first and last. */
  static double lifetimeSeconds(List<Sample> samples) {
    Sample a = samples.get(0);
    Sample b = samples.get(samples.size() - 1);
    double rate = b.atMs() > a.atMs() ? (b.decisions() - a.decisions()) * 1000.0 / (b.atMs() - a.atMs()) : 0;
    return rate > 0 ? avg(samples, Sample::keys) / rate : 0;
  }

  private static double avg(List<Sample> samples, ToDoubleFunction<Sample> f) {
    return samples.stream().mapToDouble(f).average().orElseThrow();
  }
}
