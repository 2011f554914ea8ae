package dev.sluice.bench.redis;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** One load run: a server, every contender in every mode, then the script ceiling; prints Markdown. */
public final class RedisRun {

  /** Command-line options. */
  public record Options(int seconds, int warmup, int inflight, int keys, List<String> modes, List<String> contenders,
      String server, int ceilingRequests, int memorySamples) {

    public static String usage(List<String> contenders) {
      return "options: --seconds N (15) --warmup N (3) --inflight N (64) --keys N (10000) --modes "
          + String.join(",", Workload.NAMES)
          + " --contenders " + String.join(",", contenders) + " --server redis-server|valkey-server"
          + " --ceiling-requests N (300000; 0: no redis-benchmark ceiling) --memory-samples N (200)";
    }

    /** Null when help was asked for. @throws IllegalArgumentException naming a bad option */
    public static Options parse(String[] args) {
      Map<String, String> m = new LinkedHashMap<>();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("-h") || a.equals("--help")) {
          return null;
        }
        if (!a.startsWith("--") || i + 1 >= args.length) {
          throw new IllegalArgumentException("expected --option value, got '" + a + "'");
        }
        m.put(a.substring(2), args[++i]);
      }
      Options o = new Options(
          positive(m, "seconds", 15), nonNegative(m, "warmup", 3), positive(m, "inflight", 64), positive(m, "keys", 10_000),
          List.of(m.getOrDefault("modes", String.join(",", Workload.NAMES)).split(",")),
          List.of(m.getOrDefault("contenders", String.join(",", RedisContenders.names())).split(",")),
          m.getOrDefault("server", "redis-server"), nonNegative(m, "ceiling-requests", 300_000),
          positive(m, "memory-samples", 200));
      m.keySet().removeAll(List.of("seconds", "warmup", "inflight", "keys", "modes", "contenders", "server",
          "ceiling-requests", "memory-samples"));
      if (!m.isEmpty()) {
        throw new IllegalArgumentException("unknown option(s) " + m.keySet() + "; " + usage(RedisContenders.names()));
      }
      o.modes.forEach(Workload::named);
      return o;
    }

    private static int positive(Map<String, String> m, String name, int dflt) {
      int v = nonNegative(m, name, dflt);
      if (v == 0) {
        throw new IllegalArgumentException("--" + name + " must be > 0");
      }
      return v;
    }

    private static int nonNegative(Map<String, String> m, String name, int dflt) {
      String s = m.get(name);
      if (s == null) {
        return dflt;
      }
      try {
        int v = Integer.parseInt(s);
        if (v < 0) {
          throw new IllegalArgumentException("--" + name + " must be >= 0, was " + s);
        }
        return v;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + name + " takes a whole number, was '" + s + "'");
      }
    }
  }

  /** The measurements of one contender in one mode. */
  record Result(String contender, String mode, String rule, long decisions, long allowed, long errors,
      double seconds, long p50, long p99, long p999, long commands, long scripts, double cpuSeconds,
      double clientCpuSeconds, double bytesPerKey, double redisKeysPerKey, double usedMemoryPerKey, String note) {

    double perSecond() {
      return decisions / seconds;
    }

    double cpuMicrosPerDecision() {
      return decisions == 0 ? 0 : cpuSeconds * 1e6 / decisions;
    }

    double clientCpuMicrosPerDecision() {
      return decisions == 0 ? 0 : clientCpuSeconds * 1e6 / decisions;
    }
  }

  private final Options o;
  private final List<Result> results = new ArrayList<>();

  public RedisRun(Options o) {
    this.o = o;
  }

  public void run() throws Exception {
    try (LocalRedis redis = LocalRedis.start(o.server)) {
      RedisClient adminClient = RedisClient.create(redis.uri());
      try (StatefulRedisConnection<String, String> conn = adminClient.connect()) {
        RedisCommands<String, String> admin = conn.sync();
        Map<String, String> server = RedisStats.fields(admin.info("server"));
        header(redis, server);
        for (String mode : o.modes) {
          Workload w = Workload.named(mode);
          List<String> keys = keys(w);
          for (String name : o.contenders) {
            results.add(measure(name, w, keys, redis, admin));
            System.out.println(row(results.get(results.size() - 1)));
            System.out.flush();
          }
        }
        System.out.println();
        if (o.ceilingRequests > 0) {
          ceilings(redis, admin);
        }
        ratios();
      } finally {
        adminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    }
  }

  private List<String> keys(Workload w) {
    int n = w.hot() ? 1 : o.keys;
    List<String> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      // fixed width, so that no key's name is a prefix of another's (SCAN patterns in the report)
      keys.add(String.format(Locale.ROOT, "user:%07d", i));
    }
    return keys;
  }

  private void header(LocalRedis redis, Map<String, String> server) {
    System.out.println("## Redis load, " + ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
    System.out.println();
    System.out.println("- server: " + o.server + " " + server.getOrDefault("redis_version", "?")
        + server.entrySet().stream().filter(e -> e.getKey().equals("valkey_version"))
            .map(e -> " (valkey " + e.getValue() + ")").findFirst().orElse("")
        + ", 127.0.0.1:" + redis.port() + ", no persistence");
    System.out.println("- JVM: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
        + ", " + Runtime.getRuntime().availableProcessors() + " CPUs");
    System.out.println("- per contender and mode: " + o.warmup + " s warm-up, " + o.seconds + " s measured, "
        + o.inflight + " decisions in flight; " + o.keys + " keys chosen uniformly at random, or 1 hot key");
    System.out.println("- rules: real " + Workload.named("keys").rule() + "; admitting " + Workload.named("keys-admitting").rule()
        + " (the same windows, limits that never bind here)");
    System.out.println("- Redis CPU: growth of used_cpu_sys + used_cpu_user; client CPU: this JVM's CPU time (load"
        + " generator and client library together); both over the measured run, per decision");
    System.out.println();
    System.out.println(HEAD);
    System.out.println(SEP);
  }

  private static final String HEAD = "| mode | contender | rule | decisions/s | allowed | p50 µs | p99 µs | p99.9 µs"
      + " | Redis cmds/decision | scripts/decision | Redis CPU µs/decision | client CPU µs/decision"
      + " | bytes/key (MEMORY USAGE) | Redis keys/key"
      + " | used_memory Δ/key | note |";
  private static final String SEP = "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|";

  private Result measure(String name, Workload w, List<String> keys, LocalRedis redis,
      RedisCommands<String, String> admin) throws InterruptedException {
    admin.flushall();
    long memBefore = RedisStats.take(admin).usedMemory();
    try (RedisContender c = RedisContenders.create(name, redis.uri(), w)) {
      c.prepare(keys);
      LatencyHistogram warm = new LatencyHistogram();
      Phase wp = drive(c, keys, o.warmup, warm, null);
      LatencyHistogram hist = new LatencyHistogram();
      Phase p = drive(c, keys, o.seconds, hist, admin);
      String note = "";
      if (wp.errors + p.errors > 0) {
        note = (wp.errors + p.errors) + " errors, first: " + (p.firstError != null ? p.firstError : wp.firstError);
      }
      if (!p.drained) {
        note += (note.isEmpty() ? "" : "; ") + "decisions still in flight 30 s after the end";
      }
      Memory mem = memory(c, keys, admin, memBefore);
      return new Result(name, w.name(), c.ruleDescription(), p.decisions, p.allowed, p.errors, p.seconds,
          hist.quantile(0.50), hist.quantile(0.99), hist.quantile(0.999),
          p.after.commandsSince(p.before), p.after.scriptsSince(p.before), p.after.cpuSeconds() - p.before.cpuSeconds(),
          p.clientCpuSeconds, mem.bytesPerKey, mem.redisKeysPerKey, mem.usedPerKey, note);
    }
  }

  /** What one timed phase saw. */
  private static final class Phase {
    long decisions;
    long allowed;
    long errors;
    String firstError;
    double seconds;
    boolean drained;
    RedisStats before;
    RedisStats after;
    double clientCpuSeconds;
  }

  /**
   * Keeps {@code inflight} decisions outstanding for {@code seconds}; a decision counts in this
   * phase when it was issued in it. With {@code admin}, snapshots the server's counters at the
   * phase's edges.
   */
  private Phase drive(RedisContender c, List<String> keys, int seconds, LatencyHistogram hist,
      RedisCommands<String, String> admin) throws InterruptedException {
    Phase p = new Phase();
    if (seconds == 0) {
      p.drained = true;
      return p;
    }
    Semaphore slots = new Semaphore(o.inflight);
    AtomicLong done = new AtomicLong();
    AtomicLong allowed = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    String[] firstError = new String[1];
    SplittableRandom rnd = new SplittableRandom(42);
    int n = keys.size();
    String[] ks = keys.toArray(new String[0]);
    p.before = admin == null ? null : RedisStats.take(admin);
    long cpu0 = processCpuNanos();
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
        continue;
      }
      String key = ks[n == 1 ? 0 : rnd.nextInt(n)];
      long t0 = System.nanoTime();
      CompletionStage<Boolean> f;
      try {
        f = c.acquire(key);
      } catch (RuntimeException e) {
        f = java.util.concurrent.CompletableFuture.failedFuture(e);
      }
      f.whenComplete((ok, err) -> {
        hist.record(System.nanoTime() - t0);
        done.incrementAndGet();
        if (err != null) {
          if (errors.getAndIncrement() == 0) {
            firstError[0] = String.valueOf(err);
          }
        } else if (ok) {
          allowed.incrementAndGet();
        }
        slots.release();
      });
    }
    long stop = System.nanoTime();
    p.clientCpuSeconds = (processCpuNanos() - cpu0) / 1e9;
    p.after = admin == null ? null : RedisStats.take(admin);
    p.drained = slots.tryAcquire(o.inflight, 30, TimeUnit.SECONDS);
    if (p.drained) {
      slots.release(o.inflight);
    }
    p.seconds = (stop - start) / 1e9;
    p.decisions = done.get();
    p.allowed = allowed.get();
    p.errors = errors.get();
    p.firstError = firstError[0];
    return p;
  }

  /** CPU time of this JVM (load generator and client library together), in nanoseconds. */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private record Memory(double bytesPerKey, double redisKeysPerKey, double usedPerKey) {}

  /** MEMORY USAGE summed over each sampled key's Redis keys, and the growth of used_memory per key. */
  private Memory memory(RedisContender c, List<String> keys, RedisCommands<String, String> admin, long memBefore) {
    long used = RedisStats.take(admin).usedMemory();
    List<String> sample = new ArrayList<>(keys);
    java.util.Collections.shuffle(sample, new java.util.Random(7));
    sample = sample.subList(0, Math.min(o.memorySamples, sample.size()));
    long bytes = 0;
    long redisKeys = 0;
    int withState = 0;
    for (String k : sample) {
      List<String> found = scan(admin, c.redisKeyPattern(k));
      if (found.isEmpty()) {
        continue;
      }
      withState++;
      redisKeys += found.size();
      for (String rk : found) {
        Long u = admin.memoryUsage(rk);
        bytes += u == null ? 0 : u;
      }
    }
    long dbsize = admin.dbsize();
    double perKey = withState == 0 ? 0 : (double) bytes / withState;
    double keysPer = withState == 0 ? 0 : (double) redisKeys / withState;
    double logicalKeys = keysPer == 0 ? 0 : dbsize / keysPer;
    double usedPer = logicalKeys == 0 ? 0 : (used - memBefore) / logicalKeys;
    return new Memory(perKey, keysPer, usedPer);
  }

  private static List<String> scan(RedisCommands<String, String> admin, String pattern) {
    List<String> out = new ArrayList<>();
    ScanCursor cursor = ScanCursor.INITIAL;
    ScanArgs args = ScanArgs.Builder.matches(pattern).limit(5000);
    do {
      KeyScanCursor<String> page = admin.scan(cursor, args);
      out.addAll(page.getKeys());
      cursor = page;
    } while (!cursor.isFinished());
    return out;
  }

  private String modeName(String mode) {
    Workload w = Workload.named(mode);
    String keys = w.hot() ? "1 hot key" : String.format(Locale.ROOT, "%,d keys", o.keys);
    return w.limits() == Workload.REAL ? keys : keys + ", admitting";
  }

  private String row(Result r) {
    return String.format(Locale.ROOT, "| %s | %s | %s | %,.0f | %.1f%% | %s | %s | %s | %.2f | %.2f | %.1f | %.1f | %s | %.1f | %s | %s |",
        modeName(r.mode),
        r.contender, r.rule, r.perSecond(), r.decisions == 0 ? 0 : 100.0 * r.allowed / r.decisions,
        micros(r.p50), micros(r.p99), micros(r.p999),
        r.decisions == 0 ? 0 : (double) r.commands / r.decisions, r.decisions == 0 ? 0 : (double) r.scripts / r.decisions,
        r.cpuMicrosPerDecision(), r.clientCpuMicrosPerDecision(), r.bytesPerKey == 0 ? "–" : String.format(Locale.ROOT, "%.0f", r.bytesPerKey),
        r.redisKeysPerKey,
        r.usedMemoryPerKey == 0 || Workload.named(r.mode).hot() ? "–" : String.format(Locale.ROOT, "%.0f", r.usedMemoryPerKey),
        r.note);
  }

  private static String micros(long nanos) {
    return String.format(Locale.ROOT, nanos < 100_000 ? "%.1f" : "%.0f", nanos / 1000.0);
  }

  /** redis-benchmark replaying the script call of each contender that makes one per decision. */
  private void ceilings(LocalRedis redis, RedisCommands<String, String> admin) throws IOException, InterruptedException {
    for (Ceiling c : RedisContenders.ceilings(o.contenders, redis.uri(), redis.port())) {
      for (String mode : o.modes) {
        Workload w = Workload.named(mode);
        admin.flushall();
        List<String> script = c.arguments(w);
        // As asked (64 connections, one command each in flight), and as Lettuce sends (one
        // connection, many in flight): the server reads many commands per system call in the
        // second, so it is the higher ceiling.
        for (int[] cp : new int[][] {{o.inflight, 1}, {1, o.inflight}}) {
          RedisStats before = RedisStats.take(admin);
          List<String> cmd = new ArrayList<>(List.of("redis-benchmark", "-h", "127.0.0.1", "-p",
              Integer.toString(redis.port()), "-n", Integer.toString(o.ceilingRequests), "-c", Integer.toString(cp[0]),
              "-P", Integer.toString(cp[1]), "--csv"));
          if (!w.hot()) {
            cmd.addAll(List.of("-r", Integer.toString(o.keys)));
          }
          cmd.addAll(script);
          double rps = redisBenchmark(cmd);
          RedisStats after = RedisStats.take(admin);
          long calls = after.scriptsSince(before);
          double cpu = calls == 0 ? 0 : (after.cpuSeconds() - before.cpuSeconds()) * 1e6 / calls;
          ceilingRps.merge(c.contender() + "/" + mode, rps, Math::max);
          System.out.printf(Locale.ROOT, "- ceiling of %s's script, %s, -c %d -P %d: %,.0f calls/s, Redis CPU %.1f µs/call%n"
              + "  `%s`%n", c.contender(), modeName(mode), cp[0], cp[1], rps, cpu, String.join(" ", quote(cmd)));
        }
      }
    }
  }

  private final Map<String, Double> ceilingRps = new LinkedHashMap<>();

  /** A redis-benchmark invocation of a contender's script. */
  public interface Ceiling {
    String contender();

    /**
     * The command and its arguments after redis-benchmark's options; {@code __rand_int__} in the
     * key unless the workload is a hot key.
     */
    List<String> arguments(Workload w);
  }

  private static List<String> quote(List<String> cmd) {
    List<String> out = new ArrayList<>();
    for (String s : cmd) {
      out.add(s.isEmpty() || s.matches(".*[\\s'\"{}*$].*") ? "'" + s.replace("'", "'\\''") + "'" : s);
    }
    return out;
  }

  private static double redisBenchmark(List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    double rps = 0;
    StringBuilder all = new StringBuilder();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        all.append(line).append('\n');
        // "EVALSHA ...","51234.56","1.2",...
        String[] f = line.split("\",\"");
        if (f.length >= 2 && !line.startsWith("\"test\"")) {
          rps = Double.parseDouble(f[1].replace("\"", ""));
        }
      }
    }
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0 || rps == 0) {
      throw new IllegalStateException("redis-benchmark failed: " + all);
    }
    return rps;
  }

  private void ratios() {
    System.out.println();
    System.out.println("### Ratios (same run)");
    System.out.println();
    for (String mode : o.modes) {
      Result b4j = find("bucket4j", mode);
      Result redisson = find("redisson", mode);
      for (Result r : results) {
        if (!r.mode.equals(mode) || !r.contender.startsWith("sluice")) {
          continue;
        }
        StringBuilder s = new StringBuilder("- " + r.contender + ", " + modeName(mode) + ":");
        if (b4j != null && b4j.decisions > 0) {
          s.append(String.format(Locale.ROOT, " %.2f× Bucket4j's decisions/s, %.2f× its Redis CPU per decision;",
              r.perSecond() / b4j.perSecond(), r.cpuMicrosPerDecision() / b4j.cpuMicrosPerDecision()));
        }
        if (redisson != null && redisson.decisions > 0) {
          s.append(String.format(Locale.ROOT, " %.2f× Redisson's decisions/s;", r.perSecond() / redisson.perSecond()));
        }
        Double ceiling = ceilingRps.get(r.contender + "/" + mode);
        if (ceiling != null) {
          s.append(String.format(Locale.ROOT, " %.0f%% of its script's redis-benchmark ceiling (the higher of -c %d -P 1 and -c 1 -P %d)", 100 * r.perSecond() / ceiling, o.inflight, o.inflight));
        }
        System.out.println(s);
      }
    }
  }

  private Result find(String contender, String mode) {
    for (Result r : results) {
      if (r.contender.equals(contender) && r.mode.equals(mode)) {
        return r;
      }
    }
    return null;
  }
}
