package dev.sluice.bench.lease;

import dev.sluice.Algorithm;
import dev.sluice.bench.LeaseLoad;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

/** The repetitions of {@link LeaseLoad}: worker processes per case, their results merged; prints Markdown. */
public final class LeaseRun {
  /** From the start sent to the start itself. */
  private static final long GO_AHEAD_MS = 300;
  private static final int INFLIGHT = 64;
  /** Paced workers: room for a store answering late without their demand dropping. */
  private static final int PACED_INFLIGHT = 256;

  private final String givenUri;
  private final int reps;
  private final int workers;
  private final List<LeaseCase> cases;
  /** Put before each worker's java command, e.g. to change its scheduling. */
  private final List<String> launcher;
  /** Where each paced case's admissions per millisecond go, or null. */
  private final Path raw;
  /** Per case name, one result per repetition. */
  private final Map<String, List<CaseResult>> results = new LinkedHashMap<>();

  public LeaseRun(String uri, int reps, int workers, List<LeaseCase> cases, Path raw, List<String> launcher) {
    this.raw = raw;
    this.launcher = launcher;
    this.givenUri = uri;
    this.reps = reps;
    this.workers = workers;
    this.cases = cases;
  }

  /**
   * What one case measured in one repetition. Paced cases only: {@code maxAll}, its upper bound
   * {@code maxAllUpper} and the most a window certainly held {@code maxAllLower} over every window
   * of the run (token bucket: every span), {@code steady} the
   * windows from 2 s (to the skew, if any), {@code afterSkew} those from 300 ms after it; null or
   * NaN otherwise.
   */
  record CaseResult(double decisionsPerSecond, double offeredPerSecond, long admitted, long denied, long dropped,
      long errors, long degraded, double scriptCallsPerDecision, double redisCpuMicrosPerDecision, double maxAll,
      double maxAllUpper, double maxAllLower, Windows.Range steady, Windows.Range afterSkew, String lag, String load) {}

  public void run() throws Exception {
    Standalone own = givenUri == null ? Standalone.start(Flavor.REDIS) : null;
    String uri = own != null ? own.uri() : givenUri;
    RedisClient client = RedisClient.create(uri);
    List<Worker> ws = new ArrayList<>();
    try (StatefulRedisConnection<String, String> conn = client.connect()) {
      RedisCommands<String, String> admin = conn.sync();
      header(admin);
      System.out.println("Admitted ÷ limit by answer time, [bounds from send and answer times]; token bucket: every "
          + "window ÷ (L + d·L/P) over every span.");
      System.out.println();
      System.out.println("| rep | case | decisions/s | offered/s | admitted | denied | dropped | errors | degraded | script calls "
          + "per decision | Redis CPU µs per decision | max, every window [certain – upper bound] | steady min – max "
          + "[lower bound] | after the skew min – max [lower bound] | bound width "
          + "| answer lag ms p50 / p99 / p99.9 / max (worst worker) | load before |");
      System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---|---|");
      for (int w = 0; w < workers; w++) {
        ws.add(Worker.start(launcher));
      }
      // The workers' first cases run cold (answers 100–200 ms late at the 99th percentile and exact
      // mode at a quarter of its rate while their code is compiled): the first two cases (exact and
      // leased decisions, unpaced) once, shortened and not counted, first.
      for (int i = 0; i < Math.min(2, cases.size()); i++) {
        runCase(uri, admin, ws, cases.get(i).warmUp(), "sluice:ll0c" + i + ":");
      }
      for (int rep = 1; rep <= reps; rep++) {
        for (int i = 0; i < cases.size(); i++) {
          LeaseCase c = cases.get(i);
          CaseResult r = runCase(uri, admin, ws, c, "sluice:ll" + rep + "c" + i + ":");
          results.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(r);
          System.out.println(row(rep, c, r));
          System.out.flush();
        }
      }
      summary();
    } finally {
      for (Worker w : ws) {
        w.process().getOutputStream().close(); // the end of its input ends a worker
      }
      for (Worker w : ws) {
        if (!w.process().waitFor(10, TimeUnit.SECONDS)) {
          w.process().destroy();
        }
      }
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      if (own != null) {
        own.close();
      }
    }
  }

  private void header(RedisCommands<String, String> admin) throws IOException {
    String version = field(admin.info("server"), "redis_version");
    String cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
        .findFirst().map(l -> l.substring(l.indexOf(':') + 2)).orElse("?");
    System.out.printf(Locale.ROOT, "# LeaseLoad %s%n%n", Instant.now());
    System.out.printf(Locale.ROOT, "%d worker processes, %d repetitions; %s, %d CPUs; JDK %s; Redis %s; leased mode "
        + "with the defaults (lease 1 s, reports every 100 ms, slack 1 %%), sizes from the elected leader "
        + "(the even share ⌊B ÷ (n + 1)⌋ until it publishes)%n%n",
        workers, reps, cpu, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), version);
    System.out.printf(Locale.ROOT, "workers started as: %s java …%n%n", String.join(" ", launcher));
  }

  /** A worker process and the lines it has printed, in order. */
  private record Worker(Process process, BlockingQueue<String> lines) {
    static Worker start(List<String> launcher) throws IOException {
      String java = ProcessHandle.current().info().command().orElse("java");
      List<String> cmd = new ArrayList<>(launcher);
      cmd.addAll(List.of(java, "-Xms256m", "-Xmx512m", "-XX:+UseG1GC",
          "-XX:-UseDynamicNumberOfCompilerThreads", "-cp", System.getProperty("java.class.path"),
          LeaseLoad.class.getName(), "--worker"));
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BlockingQueue<String> lines = new LinkedBlockingQueue<>();
      Thread t = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = r.readLine(); line != null; line = r.readLine()) {
            lines.add(line);
          }
        } catch (IOException e) {
          // the worker is gone: its next line never comes and the case fails on its timeout
        }
        lines.add("EXIT");
      }, "worker-output");
      t.setDaemon(true);
      t.start();
      return new Worker(p, lines);
    }

    void send(String line) throws IOException {
      process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
    }

    /** The next line starting with {@code prefix}; other lines are passed over. */
    String await(String prefix, long seconds) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      while (true) {
        String line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (line == null) {
          break;
        }
        if (line.startsWith(prefix)) {
          return line;
        }
        if (line.equals("EXIT")) {
          throw new IllegalStateException("worker " + process.pid() + " ended before printing " + prefix);
        }
      }
      throw new IllegalStateException("worker " + process.pid() + " printed no " + prefix + " in " + seconds + " s");
    }
  }

  private CaseResult runCase(String uri, RedisCommands<String, String> admin, List<Worker> ws, LeaseCase c,
      String prefix) throws Exception {
    String load = Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    for (int w = 0; w < workers; w++) {
      WorkerSpec spec = new WorkerSpec(uri, prefix, "global", c.leased(), c.algorithm(), c.limit(), c.periodMs(),
          c.durationMs(), c.rates()[w], c.skewAtMs(), c.skewRates()[w], c.paced() ? PACED_INFLIGHT : INFLIGHT);
      ws.get(w).send("CASE " + String.join(" ", spec.args()));
    }
    for (Worker w : ws) {
      w.await("READY", 60);
    }
    // Every worker has warmed up: one start for all, a moment ahead so that each reads it in time.
    long start = System.currentTimeMillis() + GO_AHEAD_MS;
    for (Worker w : ws) {
      w.send("GO " + start);
    }
    sleepUntil(start);
    long[] before = stats(admin);
    sleepUntil(start + c.durationMs());
    long[] after = stats(admin);
    List<Map<String, String>> parsed = new ArrayList<>();
    for (Worker w : ws) {
      parsed.add(parse(w.await("RESULT ", 60)));
    }
    if (c.warmUpOnly()) {
      return null;
    }
    if (raw != null && c.paced()) {
      writeRaw(raw.resolve(prefix.replace("sluice:", "").replace(":", "") + "-" + c.name().replaceAll("[^a-z_]+", "-")
          + ".csv.gz"), parsed, c.durationMs());
    }
    return measure(c, parsed, after[0] - before[0], after[1] - before[1], load);
  }

  private CaseResult measure(LeaseCase c, List<Map<String, String>> ws, long scriptCalls, double redisCpuMicros,
      String load) {
    long decisions = sum(ws, "decisions");
    long offered = sum(ws, "offered");
    double seconds = c.durationMs() / 1000.0;
    double nan = Double.NaN;
    double maxAll = nan;
    double maxAllUpper = nan;
    double maxAllLower = nan;
    Windows.Range steady = null;
    Windows.Range afterSkew = null;
    if (c.paced()) {
      Windows windows = new Windows(merge(ws, "sent"), merge(ws, "answered"));
      int p = (int) c.periodMs();
      int lastStart = c.durationMs() - p;
      if (c.algorithm() == Algorithm.TOKEN_BUCKET) {
        double[] tb = windows.tokenBucketMax(p, c.limit(), c.durationMs());
        maxAll = tb[0];
        maxAllUpper = tb[1];
        maxAllLower = tb[2];
      } else {
        Windows.Range all = windows.sliding(p, c.limit(), 0, lastStart);
        maxAll = all.max();
        maxAllUpper = all.maxUpper();
        maxAllLower = all.maxLower();
      }
      steady = windows.sliding(p, c.limit(), LeaseCase.STEADY_FROM_MS, c.skewed() ? c.skewAtMs() - p : lastStart);
      if (c.skewed()) {
        afterSkew = windows.sliding(p, c.limit(), c.skewAtMs() + LeaseCase.AFTER_SKEW_MS, lastStart);
      }
    }
    return new CaseResult(decisions / seconds, offered / seconds, sum(ws, "admitted"), sum(ws, "denied"),
        sum(ws, "dropped"), sum(ws, "errors"), sum(ws, "degraded"),
        decisions == 0 ? nan : (double) scriptCalls / decisions,
        decisions == 0 ? nan : redisCpuMicros / decisions, maxAll, maxAllUpper, maxAllLower, steady, afterSkew,
        c.paced() ? worst(ws, "lagP50") + " / " + worst(ws, "lagP99") + " / " + worst(ws, "lagP999") + " / "
            + worst(ws, "lagMax") : "—", load);
  }

  /** The highest of the workers' figure. */
  private static long worst(List<Map<String, String>> ws, String field) {
    return ws.stream().mapToLong(w -> Long.parseLong(w.get(field))).max().orElse(0);
  }

  private static int[] merge(List<Map<String, String>> ws, String field) {
    int[] merged = null;
    for (Map<String, String> w : ws) {
      String[] bins = w.get(field).split(",");
      if (merged == null) {
        merged = new int[bins.length];
      }
      for (int i = 0; i < merged.length; i++) {
        merged[i] += Integer.parseInt(bins[i]);
      }
    }
    return merged;
  }

  private String row(int rep, LeaseCase c, CaseResult r) {
    return String.format(Locale.ROOT,
        "| %d | %s | %,.0f | %s | %,d | %,d | %,d | %,d | %,d | %.4f | %.2f | %s | %s | %s | %s | %s | %s |",
        rep, c.name(), r.decisionsPerSecond(), c.paced() ? String.format(Locale.ROOT, "%,.0f", r.offeredPerSecond())
            : "unpaced", r.admitted(), r.denied(), r.dropped(), r.errors(), r.degraded(), r.scriptCallsPerDecision(),
        r.redisCpuMicrosPerDecision(),
        Double.isNaN(r.maxAll()) ? "—" : f(r.maxAll()) + " [" + f(r.maxAllLower()) + " – " + f(r.maxAllUpper()) + "]",
        range(r.steady()),
        range(r.afterSkew()), r.steady() == null ? "—" : f(r.steady().meanWidth()), r.lag(), r.load());
  }

  private void summary() {
    System.out.println();
    System.out.println("## Medians over the repetitions");
    System.out.println();
    List<CaseResult> exact = results.get("throughput exact");
    List<CaseResult> leased = results.get("throughput leased");
    if (exact != null && leased != null) {
      double[] ratios = new double[Math.min(exact.size(), leased.size())];
      for (int i = 0; i < ratios.length; i++) {
        ratios[i] = leased.get(i).decisionsPerSecond() / exact.get(i).decisionsPerSecond();
      }
      System.out.printf(Locale.ROOT, "throughput, decisions/s of all workers: exact %,.0f, leased %,.0f; leased ÷ exact "
          + "%.1f× (each repetition: %s); script calls per decision exact %.4f, leased %.6f%n%n",
          median(exact, CaseResult::decisionsPerSecond), median(leased, CaseResult::decisionsPerSecond),
          median(ratios), Arrays.toString(Arrays.stream(ratios).map(x -> Math.round(x * 10) / 10.0).toArray()),
          median(exact, CaseResult::scriptCallsPerDecision), median(leased, CaseResult::scriptCallsPerDecision));
    }
    System.out.println("| case | max, every window | certain | its upper bound | steady min | its lower bound | steady max "
        + "| after the skew min | its lower bound | after the skew max | bound width | script calls per decision |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (Map.Entry<String, List<CaseResult>> e : results.entrySet()) {
      List<CaseResult> rs = e.getValue();
      if (rs.get(0).steady() == null) {
        continue;
      }
      boolean skew = rs.get(0).afterSkew() != null;
      System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.4f |%n", e.getKey(),
          f(median(rs, CaseResult::maxAll)), f(median(rs, CaseResult::maxAllLower)),
          f(median(rs, CaseResult::maxAllUpper)),
          f(median(rs, r -> r.steady().min())), f(median(rs, r -> r.steady().minLower())),
          f(median(rs, r -> r.steady().max())),
          skew ? f(median(rs, r -> r.afterSkew().min())) : "—",
          skew ? f(median(rs, r -> r.afterSkew().minLower())) : "—",
          skew ? f(median(rs, r -> r.afterSkew().max())) : "—", f(median(rs, r -> r.steady().meanWidth())),
          median(rs, CaseResult::scriptCallsPerDecision));
    }
  }

  private static double median(List<CaseResult> rs, java.util.function.ToDoubleFunction<CaseResult> f) {
    return median(rs.stream().mapToDouble(f).toArray());
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static String f(double x) {
    return Double.isNaN(x) ? "—" : String.format(Locale.ROOT, "%.4f", x);
  }

  private static String range(Windows.Range r) {
    return r == null ? "—" : f(r.min()) + " – " + f(r.max()) + " [" + f(r.minLower()) + "]";
  }

  /** Script calls (the clients' round trips that ran a script) and Redis CPU in µs so far. */
  private static long[] stats(RedisCommands<String, String> admin) {
    long scripts = 0;
    for (String line : admin.info("commandstats").split("\r?\n")) {
      if (line.startsWith("cmdstat_fcall") || line.startsWith("cmdstat_eval")) {
        String rest = line.substring(line.indexOf("calls=") + 6);
        scripts += Long.parseLong(rest.substring(0, rest.indexOf(',')));
      }
    }
    String cpu = admin.info("cpu");
    double seconds = Double.parseDouble(field(cpu, "used_cpu_sys")) + Double.parseDouble(field(cpu, "used_cpu_user"));
    return new long[] {scripts, (long) (seconds * 1e6)};
  }

  private static String field(String info, String name) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1).trim();
      }
    }
    throw new IllegalStateException("INFO has no " + name);
  }

  private static Map<String, String> parse(String line) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String kv : line.substring(7).trim().split(" ")) {
      int eq = kv.indexOf('=');
      m.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    return m;
  }

  private static long sum(List<Map<String, String>> ws, String field) {
    return ws.stream().mapToLong(w -> Long.parseLong(w.get(field))).sum();
  }

  /** Admissions per millisecond of each worker by send and by answer time, one line per millisecond. */
  private static void writeRaw(Path file, List<Map<String, String>> ws, int millis) throws IOException {
    List<String[]> bins = new ArrayList<>();
    for (Map<String, String> w : ws) {
      bins.add(w.get("sent").split(","));
      bins.add(w.get("answered").split(","));
    }
    Files.createDirectories(file.getParent());
    try (Writer out = new OutputStreamWriter(new GZIPOutputStream(Files.newOutputStream(file)),
        StandardCharsets.UTF_8)) {
      StringBuilder head = new StringBuilder("ms");
      for (int w = 0; w < ws.size(); w++) {
        head.append(",sent").append(w).append(",answered").append(w);
      }
      out.write(head.append('\n').toString());
      for (int i = 0; i < millis; i++) {
        StringBuilder line = new StringBuilder().append(i);
        for (String[] b : bins) {
          line.append(',').append(b[i]);
        }
        out.write(line.append('\n').toString());
      }
    }
  }

  private static void sleepUntil(long epochMs) throws InterruptedException {
    long left = epochMs - System.currentTimeMillis();
    if (left > 0) {
      Thread.sleep(left);
    }
  }
}
