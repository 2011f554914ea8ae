package dev.sluice.bench.lease;

import dev.sluice.Algorithm;
import dev.sluice.bench.LeaseLoad;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The repetitions of {@link LeaseLoad}: worker processes per case, their results merged; prints Markdown. */
public final class LeaseRun {
  /** Before the run's start: the workers' JVMs start, connect and warm up. */
  private static final long LEAD_MS = 3_000;
  private static final int INFLIGHT = 64;

  private final String givenUri;
  private final int reps;
  private final int workers;
  private final List<LeaseCase> cases;
  /** Per case name, one result per repetition. */
  private final Map<String, List<CaseResult>> results = new LinkedHashMap<>();

  public LeaseRun(String uri, int reps, int workers, List<LeaseCase> cases) {
    this.givenUri = uri;
    this.reps = reps;
    this.workers = workers;
    this.cases = cases;
  }

  /** What one case measured in one repetition; NaN where the case has no such figure. */
  record CaseResult(double decisionsPerSecond, double offeredPerSecond, long admitted, long denied, long dropped,
      long errors, double scriptCallsPerDecision, double redisCpuMicrosPerDecision, double maxAll, double minSteady,
      double maxSteady, double minAfterSkew, double maxAfterSkew, int windows, String load) {}

  public void run() throws Exception {
    Standalone own = givenUri == null ? Standalone.start(Flavor.REDIS) : null;
    String uri = own != null ? own.uri() : givenUri;
    RedisClient client = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> conn = client.connect()) {
      RedisCommands<String, String> admin = conn.sync();
      header(admin);
      System.out.println("| rep | case | decisions/s | offered/s | admitted | denied | dropped | errors | script calls "
          + "per decision | Redis CPU µs per decision | max admitted ÷ limit, every window | steady min – max "
          + "| after the skew min – max | load before |");
      System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|");
      for (int rep = 1; rep <= reps; rep++) {
        for (int i = 0; i < cases.size(); i++) {
          LeaseCase c = cases.get(i);
          CaseResult r = runCase(uri, admin, c, "sluice:ll" + rep + "c" + i + ":");
          results.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(r);
          System.out.println(row(rep, c, r));
          System.out.flush();
        }
      }
      summary();
    } finally {
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
        + "with the defaults (lease 1 s, reports every 100 ms, slack 1 %%), no leader (even share ⌊B ÷ (n + 1)⌋)%n%n",
        workers, reps, cpu, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), version);
  }

  private CaseResult runCase(String uri, RedisCommands<String, String> admin, LeaseCase c, String prefix)
      throws Exception {
    String load = Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    long start = System.currentTimeMillis() + LEAD_MS;
    List<Process> processes = new ArrayList<>();
    List<CompletableFuture<String>> outputs = new ArrayList<>();
    String java = ProcessHandle.current().info().command().orElse("java");
    for (int w = 0; w < workers; w++) {
      WorkerSpec spec = new WorkerSpec(uri, prefix, "global", c.leased(), c.algorithm(), c.limit(), c.periodMs(),
          start, c.durationMs(), c.rates()[w], c.skewAtMs(), c.skewRates()[w], INFLIGHT);
      List<String> cmd = new ArrayList<>(List.of(java, "-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-cp",
          System.getProperty("java.class.path"), LeaseLoad.class.getName(), "--worker"));
      cmd.addAll(spec.args());
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      processes.add(p);
      outputs.add(CompletableFuture.supplyAsync(() -> readAll(p.getInputStream())));
    }
    try {
      sleepUntil(start);
      long[] before = stats(admin);
      sleepUntil(start + c.durationMs());
      long[] after = stats(admin);
      List<Map<String, String>> parsed = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        String out = outputs.get(w).get(60, TimeUnit.SECONDS);
        if (!processes.get(w).waitFor(30, TimeUnit.SECONDS) || processes.get(w).exitValue() != 0) {
          throw new IllegalStateException("worker " + w + " of '" + c.name() + "' failed; its output: " + out);
        }
        parsed.add(parse(out, w));
      }
      return measure(c, parsed, after[0] - before[0], after[1] - before[1], load);
    } finally {
      processes.forEach(Process::destroy);
    }
  }

  private CaseResult measure(LeaseCase c, List<Map<String, String>> ws, long scriptCalls, double redisCpuMicros,
      String load) {
    long decisions = sum(ws, "decisions");
    long offered = sum(ws, "offered");
    double seconds = c.durationMs() / 1000.0;
    double nan = Double.NaN;
    double maxAll = nan;
    double minSteady = nan;
    double maxSteady = nan;
    double minSkew = nan;
    double maxSkew = nan;
    int windows = 0;
    if (c.paced()) {
      int[] merged = new int[c.durationMs()];
      for (Map<String, String> w : ws) {
        String[] bins = w.get("perMs").split(",");
        for (int i = 0; i < merged.length; i++) {
          merged[i] += Integer.parseInt(bins[i]);
        }
      }
      int p = (int) c.periodMs();
      int lastStart = c.durationMs() - p;
      maxAll = c.algorithm() == Algorithm.TOKEN_BUCKET
          ? Windows.tokenBucketMax(merged, p, c.limit())
          : Windows.sliding(merged, p, c.limit(), 0, lastStart).max();
      int steadyTo = c.skewed() ? c.skewAtMs() - p : lastStart;
      Windows.Range steady = Windows.sliding(merged, p, c.limit(), LeaseCase.STEADY_FROM_MS, steadyTo);
      minSteady = steady.min();
      maxSteady = steady.max();
      windows = steady.windows();
      if (c.skewed()) {
        Windows.Range after = Windows.sliding(merged, p, c.limit(), c.skewAtMs() + LeaseCase.AFTER_SKEW_MS, lastStart);
        minSkew = after.min();
        maxSkew = after.max();
        windows += after.windows();
      }
    }
    return new CaseResult(decisions / seconds, offered / seconds, sum(ws, "admitted"), sum(ws, "denied"),
        sum(ws, "dropped"), sum(ws, "errors"), decisions == 0 ? nan : (double) scriptCalls / decisions,
        decisions == 0 ? nan : redisCpuMicros / decisions, maxAll, minSteady, maxSteady, minSkew, maxSkew, windows,
        load);
  }

  private String row(int rep, LeaseCase c, CaseResult r) {
    return String.format(Locale.ROOT, "| %d | %s | %,.0f | %s | %,d | %,d | %,d | %,d | %.4f | %.2f | %s | %s | %s | %s |",
        rep, c.name(), r.decisionsPerSecond(), c.paced() ? String.format(Locale.ROOT, "%,.0f", r.offeredPerSecond())
            : "unpaced", r.admitted(), r.denied(), r.dropped(), r.errors(), r.scriptCallsPerDecision(),
        r.redisCpuMicrosPerDecision(), f(r.maxAll()), range(r.minSteady(), r.maxSteady()),
        range(r.minAfterSkew(), r.maxAfterSkew()), r.load());
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
    System.out.println("| case | max admitted ÷ limit, every window | steady min | steady max | after the skew min "
        + "| after the skew max | script calls per decision |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    for (Map.Entry<String, List<CaseResult>> e : results.entrySet()) {
      List<CaseResult> rs = e.getValue();
      if (Double.isNaN(rs.get(0).maxAll())) {
        continue;
      }
      System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %.4f |%n", e.getKey(),
          f(median(rs, CaseResult::maxAll)), f(median(rs, CaseResult::minSteady)), f(median(rs, CaseResult::maxSteady)),
          f(median(rs, CaseResult::minAfterSkew)), f(median(rs, CaseResult::maxAfterSkew)),
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

  private static String range(double lo, double hi) {
    return Double.isNaN(lo) ? "—" : f(lo) + " – " + f(hi);
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

  private static Map<String, String> parse(String out, int worker) {
    for (String line : out.split("\n")) {
      if (line.startsWith("RESULT ")) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String kv : line.substring(7).trim().split(" ")) {
          int eq = kv.indexOf('=');
          m.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return m;
      }
    }
    throw new IllegalStateException("worker " + worker + " printed no RESULT line: " + out);
  }

  private static long sum(List<Map<String, String>> ws, String field) {
    return ws.stream().mapToLong(w -> Long.parseLong(w.get(field))).sum();
  }

  private static String readAll(InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static void sleepUntil(long epochMs) throws InterruptedException {
    long left = epochMs - System.currentTimeMillis();
    if (left > 0) {
      Thread.sleep(left);
    }
  }
}
