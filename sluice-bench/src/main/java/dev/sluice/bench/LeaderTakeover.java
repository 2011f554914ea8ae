package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.DecisionListener;
import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How long leased mode is without a leader when its leader dies: worker processes (this class with
 * {@code --worker}) each embed the library with one leased rule (1,000 per second, the default
 * lease of 1 s, reports every 100 ms) and offer it 250 requests a second on one key; the parent
 * waits for a leader, kills its process ({@code SIGKILL}: no resignation, its term simply stops
 * being renewed), and times until another worker wins a term. Then it starts a new worker in
 * place of the killed one, lets the fleet settle, and kills again.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.LeaderTakeover [--workers 4] [--kills 5]
 *     [--uri redis://…]
 * </pre>
 *
 * Without {@code --uri} it starts {@code redis-server} (test kit, free 127.0.0.1 port). Times are
 * the workers' wall clocks (one machine): from the kill to the new leader's {@code onLeadership}.
 */
public final class LeaderTakeover {
  static final Rule RULE = Rule.builder("api").algorithm(Algorithm.SLIDING_LOG).window(1000, Duration.ofSeconds(1))
      .lease(LeasePolicy.DEFAULTS).build();
  static final int RATE_PER_WORKER = 250;
  /** After a new worker joins: its report reaches the board and the leader sizes it. */
  static final long SETTLE_MS = 3_000;

  private LeaderTakeover() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--worker")) {
      worker(args[1], args[2]);
      return;
    }
    int workers = 4;
    int kills = 5;
    String uri = null;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--workers" -> workers = Integer.parseInt(args[i + 1]);
        case "--kills" -> kills = Integer.parseInt(args[i + 1]);
        case "--uri" -> uri = args[i + 1];
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + "; options: --workers N (4), --kills N (5), --uri redis://… (default: a redis-server of its own)");
      }
    }
    if (args.length % 2 != 0 || workers < 2 || kills < 1) {
      throw new IllegalArgumentException("options come in pairs; --workers ≥ 2, --kills ≥ 1");
    }
    Standalone own = uri == null ? Standalone.start(Flavor.REDIS) : null;
    String at = own != null ? own.uri() : uri;
    String prefix = "sluice:to" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    List<Worker> fleet = new ArrayList<>();
    try {
      System.out.printf(Locale.ROOT, "# LeaderTakeover %s%n%n%d worker processes, %d kills; %s, %d CPUs; JDK %s; rule "
          + "%s; %d requests/s per worker on one key%n%n", Instant.now(), workers, kills, cpu(),
          Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), RULE, RATE_PER_WORKER);
      for (int i = 0; i < workers; i++) {
        fleet.add(Worker.start(at, prefix));
      }
      for (Worker w : fleet) {
        w.awaitReady();
      }
      System.out.println("| kill | leader killed (pid) | leaderless ms | new leader (pid) |");
      System.out.println("|---:|---:|---:|---:|");
      long[] gaps = new long[kills];
      for (int k = 0; k < kills; k++) {
        Worker leader = awaitLeader(fleet, 30_000);
        Thread.sleep(SETTLE_MS);
        leader = awaitLeader(fleet, 30_000);
        long killed = System.currentTimeMillis();
        leader.process.destroyForcibly();
        leader.process.waitFor(10, TimeUnit.SECONDS);
        fleet.remove(leader);
        Worker next = null;
        long deadline = killed + 30_000;
        while (next == null && System.currentTimeMillis() < deadline) {
          for (Worker w : fleet) {
            if (w.leads.get() && w.leadsSince.get() >= killed) {
              next = w;
            }
          }
          Thread.sleep(5);
        }
        if (next == null) {
          throw new IllegalStateException("no new leader within 30 s of the kill");
        }
        gaps[k] = next.leadsSince.get() - killed;
        System.out.printf(Locale.ROOT, "| %d | %d | %,d | %d |%n", k + 1, leader.process.pid(), gaps[k],
            next.process.pid());
        Worker fresh = Worker.start(at, prefix);
        fleet.add(fresh);
        fresh.awaitReady();
      }
      long[] sorted = gaps.clone();
      Arrays.sort(sorted);
      System.out.printf(Locale.ROOT, "%nleaderless after a kill: median %,d ms, min %,d, max %,d (the lease length "
          + "is %d ms)%n", sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1],
          RULE.lease().leaseLength().toMillis());
    } finally {
      for (Worker w : fleet) {
        w.process.getOutputStream().close(); // the end of its input ends a worker
      }
      for (Worker w : fleet) {
        if (!w.process.waitFor(10, TimeUnit.SECONDS)) {
          w.process.destroyForcibly();
        }
      }
      if (own != null) {
        own.close();
      }
    }
  }

  private static Worker awaitLeader(List<Worker> fleet, long millis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    while (System.currentTimeMillis() < deadline) {
      for (Worker w : fleet) {
        if (w.leads.get()) {
          return w;
        }
      }
      Thread.sleep(5);
    }
    throw new IllegalStateException("no worker leads after " + millis + " ms");
  }

  private static String cpu() throws IOException {
    return java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/cpuinfo")).stream()
        .filter(l -> l.startsWith("model name")).findFirst().map(l -> l.substring(l.indexOf(':') + 2)).orElse("?");
  }

  /** A worker process: whether it leads, and since when (its clock, epoch ms), from its output. */
  private record Worker(Process process, AtomicBoolean leads, AtomicLong leadsSince, AtomicBoolean ready) {
    static Worker start(String uri, String prefix) throws IOException {
      String java = ProcessHandle.current().info().command().orElse("java");
      Process p = new ProcessBuilder(java, "-Xms128m", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
          LeaderTakeover.class.getName(), "--worker", uri, prefix).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      Worker w = new Worker(p, new AtomicBoolean(), new AtomicLong(), new AtomicBoolean());
      Thread t = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = r.readLine(); line != null; line = r.readLine()) {
            if (line.equals("READY")) {
              w.ready.set(true);
            } else if (line.startsWith("LEADS ")) {
              String[] f = line.split(" ");
              w.leadsSince.set(Long.parseLong(f[2]));
              w.leads.set(Boolean.parseBoolean(f[1]));
            }
          }
        } catch (IOException e) {
          // killed
        }
        w.leads.set(false);
      }, "worker-" + p.pid());
      t.setDaemon(true);
      t.start();
      return w;
    }

    void awaitReady() throws InterruptedException {
      long deadline = System.currentTimeMillis() + 60_000;
      while (!ready.get()) {
        if (System.currentTimeMillis() > deadline || !process.isAlive()) {
          throw new IllegalStateException("worker " + process.pid() + " did not start");
        }
        Thread.sleep(10);
      }
    }
  }

  /** A worker: the leased rule, paced requests until its input ends, its leadership on its output. */
  private static void worker(String uri, String prefix) throws Exception {
    DecisionListener leadership = new DecisionListener() {
      @Override
      public void onLeadership(boolean leads) {
        synchronized (System.out) {
          System.out.println("LEADS " + leads + " " + System.currentTimeMillis());
          System.out.flush();
        }
      }
    };
    AtomicBoolean running = new AtomicBoolean(true);
    Thread input = new Thread(() -> {
      try {
        while (System.in.read() >= 0) {
          // nothing is sent: the end of the input is the signal
        }
      } catch (IOException ignored) {
        // the parent is gone
      }
      running.set(false);
    }, "input");
    input.setDaemon(true);
    input.start();
    try (RedisStore store = RedisStore.builder(uri).prefix(prefix).build();
        RateLimiter limiter = Sluice.builder().rules(RULE).store(store).listener(leadership).build()) {
      synchronized (System.out) {
        System.out.println("READY");
        System.out.flush();
      }
      Request request = Request.of("api", "global");
      long intervalNanos = 1_000_000_000L / RATE_PER_WORKER;
      long next = System.nanoTime();
      while (running.get()) {
        limiter.acquireAsync(request);
        next += intervalNanos;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
      }
    }
  }
}
