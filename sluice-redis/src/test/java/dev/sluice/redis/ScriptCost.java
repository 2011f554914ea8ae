package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Monitor;
import dev.sluice.testkit.Standalone;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What the decision script costs the server, per algorithm, for the rule 20/60s + 5/3s: on one
 * hot key (almost every decision a denial) and on 10,000 keys chosen at random (mostly
 * admissions). For each, the store's own call (FCALL of the library, or with {@code --code
 * script} EVALSHA of the script, as MONITOR sees one decision send it) is replayed by {@code
 * redis-benchmark} — 64 connections with one call each, and one connection with 64 pipelined —
 * and then the store itself decides the same number of times with 64 in flight on its one
 * connection (after as many to warm the JVM up). Each row gives calls per second, {@code
 * usec_per_call} of {@code FCALL} or {@code EVALSHA} from {@code INFO commandstats} (the time the
 * server spent inside the code), the server's CPU (user + sys, so reading and writing the sockets
 * too) per call, how many calls the server read per socket read, and for the store this JVM's CPU
 * per decision. Two references give the floor, as functions or scripts like the store's code: an
 * empty one, and one that only runs TIME, GET and SET with PX, the commands a decision cannot do
 * without. The exact redis-benchmark commands are printed after the table.
 *
 * <p>Not a test: run it by hand on a quiet machine (numbers are in {@code docs/redis-internals.md}, "Script cost"):
 *
 * <pre>
 * ./mvnw -q -pl sluice-redis -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * java -cp sluice-redis/target/test-classes:sluice-redis/target/classes:$(cat sluice-redis/target/test-classpath.txt) \
 *     dev.sluice.redis.ScriptCost [--requests 200000] [--inflight 64] [--keys 10000] [--flavor redis|valkey] \
 *     [--algorithms sliding_log,token_bucket,fixed_window,sliding_window,leaky_bucket] [--modes hot,keys] \
 *     [--clients benchmark,sluice] [--references true] [--code function|script]
 * </pre>
 */
public final class ScriptCost {
  private static final String RULE = "auth.createToken";
  private static final String HOT_KEY = "user:0000000";

  private final Standalone server;
  private final int requests;
  private final int inflight;
  private final int keys;
  private final List<String> clients;
  /** Whether the store calls the function library (FCALL) or the script (EVALSHA). */
  private final boolean functions;
  private final List<String> commands = new ArrayList<>();
  /** Key names as redis-benchmark makes them, built once: formatting is no part of a decision. */
  private final String[] keyNames;

  private ScriptCost(Standalone server, int requests, int inflight, int keys, List<String> clients,
      boolean functions) {
    this.server = server;
    this.functions = functions;
    this.requests = requests;
    this.inflight = inflight;
    this.keys = keys;
    this.clients = clients;
    this.keyNames = new String[keys];
    for (int i = 0; i < keys; i++) {
      keyNames[i] = String.format(Locale.ROOT, "user:%012d", i);
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> o = options(args);
    Flavor flavor = Flavor.valueOf(o.getOrDefault("flavor", "redis").toUpperCase(Locale.ROOT));
    int requests = Integer.parseInt(o.getOrDefault("requests", "200000"));
    int inflight = Integer.parseInt(o.getOrDefault("inflight", "64"));
    int keys = Integer.parseInt(o.getOrDefault("keys", "10000"));
    List<String> algorithms = List.of(o.getOrDefault("algorithms",
        "sliding_log,token_bucket,fixed_window,sliding_window,leaky_bucket").split(","));
    List<String> modes = List.of(o.getOrDefault("modes", "hot,keys").split(","));
    try (Standalone server = Standalone.start(flavor)) {
      List<String> clients = List.of(o.getOrDefault("clients", "benchmark,sluice").split(","));
      boolean functions = !o.getOrDefault("code", "function").equals("script");
      ScriptCost run = new ScriptCost(server, requests, inflight, keys, clients, functions);
      System.out.printf(Locale.ROOT,
          "%s %s, %s, %,d calls per row, %d in flight, %,d keys or 1 hot key, rule 20/60s + 5/3s%n%n",
          flavor.binaryName(), info(server, "server").get("redis_version"), functions ? "FCALL" : "EVALSHA", requests,
          inflight, keys);
      System.out.println("| algorithm | mode | client | calls/s | usec_per_call | Redis CPU µs/call | calls per socket read"
          + " | client CPU µs/call |");
      System.out.println("|---|---|---|---:|---:|---:|---:|---:|");
      if (Boolean.parseBoolean(o.getOrDefault("references", "true"))) {
        run.references();
      }
      for (String a : algorithms) {
        for (String m : modes) {
          run.measure(Algorithm.fromConfigName(a), m.equals("hot"));
        }
      }
      System.out.println();
      run.commands.forEach(c -> System.out.println("    " + c));
    }
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --option value, got '" + args[i] + "'");
      }
      m.put(args[i].substring(2), args[i + 1]);
    }
    return m;
  }

  /** The floor: what any script pays to run at all, and for the three commands a decision needs. */
  private void references() throws IOException, InterruptedException {
    String floorBody = "local t = redis.call('TIME') local v = redis.call('GET', KEYS[1]) "
        + "redis.call('SET', KEYS[1], 'x', 'PX', '60000') return '" + "x".repeat(72) + "'";
    List<String> empty;
    List<String> floor;
    if (functions) {
      server.command("FUNCTION", "LOAD", "REPLACE", "#!lua name=reference\n"
          + "redis.register_function('reference_empty', function(KEYS, ARGV) return 0 end)\n"
          + "redis.register_function('reference_floor', function(KEYS, ARGV) " + floorBody + " end)\n");
      empty = List.of("FCALL", "reference_empty");
      floor = List.of("FCALL", "reference_floor");
    } else {
      empty = List.of("EVALSHA", (String) server.command("SCRIPT", "LOAD", "return 0"));
      floor = List.of("EVALSHA", (String) server.command("SCRIPT", "LOAD", floorBody));
    }
    Map<String, List<String>> references = new LinkedHashMap<>();
    references.put("empty", empty);
    references.put("TIME + GET + SET PX", floor);
    for (Map.Entry<String, List<String>> ref : references.entrySet()) {
      List<String> call = new ArrayList<>(ref.getValue());
      call.addAll(List.of("1", "user:__rand_int__"));
      for (Row r : benchmark(call, false)) {
        print(ref.getKey(), "keys", r);
      }
    }
  }

  private void measure(Algorithm algorithm, boolean hot) throws Exception {
    Rule rule = Rule.builder(RULE).algorithm(algorithm)
        .window(20, Duration.ofSeconds(60)).window(5, Duration.ofSeconds(3)).build();
    String mode = hot ? "hot" : "keys";
    String name = algorithm.configName();
    // Measured here is the script, not timeouts: a slow answer on a busy machine must not fail.
    RedisStore store = RedisStore.builder(server.uri()).commandTimeout(Duration.ofSeconds(30)).build();
    if (!functions) {
      store.link().useScript();
    }
    try (RateLimiter limiter = Sluice.builder().rules(rule).store(store).storeTimeout(Duration.ofSeconds(30)).build()) {
      if (clients.contains("benchmark")) {
        for (Row r : benchmark(recordedCall(limiter), hot)) {
          print(name, mode, r);
        }
      }
      if (clients.contains("sluice")) {
        client(limiter, hot); // warm-up: the JIT, the connection
        print(name, mode, client(limiter, hot));
      }
    }
  }

  /** The FCALL or EVALSHA that one decision sends, with {@code __rand_int__} in place of the key's number. */
  private List<String> recordedCall(RateLimiter limiter) throws InterruptedException {
    limiter.acquire(RULE, "warm-up"); // loads the script if needed
    List<String> lines;
    try (Monitor m = Monitor.start(server.port())) {
      limiter.acquire(RULE, HOT_KEY);
      server.command("ECHO", "end");
      do {
        Thread.sleep(10);
        lines = m.lines();
      } while (lines.stream().noneMatch(l -> l.contains("\"ECHO\"") || l.contains("\"echo\"")));
    }
    for (String l : lines) {
      List<String> args = parseMonitor(l);
      if (!args.isEmpty() && (args.get(0).equalsIgnoreCase("evalsha") || args.get(0).equalsIgnoreCase("fcall"))) {
        args.replaceAll(a -> a.replace("{" + RULE + "|" + HOT_KEY + "}", "{" + RULE + "|user:__rand_int__}"));
        return args;
      }
    }
    throw new IllegalStateException("no FCALL or EVALSHA seen for one decision: " + lines);
  }

  /** MONITOR's quoted arguments after "] "; the decision's arguments are plain ASCII. */
  private static List<String> parseMonitor(String line) {
    List<String> args = new ArrayList<>();
    int i = line.indexOf("] ");
    if (i < 0) {
      return args;
    }
    while ((i = line.indexOf('"', i)) >= 0) {
      StringBuilder b = new StringBuilder();
      i++;
      while (line.charAt(i) != '"') {
        char c = line.charAt(i);
        if (c == '\\') {
          c = line.charAt(++i);
        }
        b.append(c);
        i++;
      }
      args.add(b.toString());
      i++;
    }
    return args;
  }

  /** clientCpuPerCall: this JVM's CPU per decision (all threads), or NaN for redis-benchmark. */
  private record Row(String client, double perSecond, double usecPerCall, double cpuPerCall, double callsPerRead,
      double clientCpuPerCall) {}

  private List<Row> benchmark(List<String> call, boolean hot) throws IOException, InterruptedException {
    List<Row> rows = new ArrayList<>();
    for (int[] cp : new int[][] {{inflight, 1}, {1, inflight}}) {
      server.flushAll();
      server.command("CONFIG", "RESETSTAT");
      double cpu = cpuSeconds();
      List<String> cmd = new ArrayList<>(List.of("redis-benchmark", "-h", "127.0.0.1", "-p",
          Integer.toString(server.port()), "-n", Integer.toString(requests), "-c", Integer.toString(cp[0]),
          "-P", Integer.toString(cp[1]), "--csv"));
      if (!hot) {
        cmd.addAll(List.of("-r", Integer.toString(keys)));
      }
      cmd.addAll(call.stream().map(a -> hot ? a.replace("__rand_int__", HOT_KEY.substring(5)) : a).toList());
      double rps = redisBenchmark(cmd);
      if (cp[0] == 1) {
        commands.add(String.join(" ", cmd.stream()
            .map(a -> a.isEmpty() || a.matches(".*[\\s'\"{}|\\[\\]].*") ? "'" + a + "'" : a).toList()));
      }
      rows.add(stats("redis-benchmark -c " + cp[0] + " -P " + cp[1], rps, cpu, Double.NaN));
    }
    return rows;
  }

  private Row client(RateLimiter limiter, boolean hot) throws InterruptedException {
    server.flushAll();
    server.command("CONFIG", "RESETSTAT");
    double cpu = cpuSeconds();
    long jvmCpu = jvmCpuNanos();
    Semaphore permits = new Semaphore(inflight);
    AtomicLong failures = new AtomicLong();
    AtomicReference<String> firstFailure = new AtomicReference<>();
    long start = System.nanoTime();
    for (int i = 0; i < requests; i++) {
      permits.acquire();
      String key = hot ? HOT_KEY : keyNames[ThreadLocalRandom.current().nextInt(keys)];
      limiter.acquireAsync(Request.of(RULE, key)).whenComplete((d, e) -> {
        if (e != null || d.degraded()) {
          failures.incrementAndGet();
          firstFailure.compareAndSet(null, e != null ? e.toString() : "degraded: " + d);
        }
        permits.release();
      });
    }
    permits.acquire(inflight);
    double seconds = (System.nanoTime() - start) / 1e9;
    if (failures.get() > 0) {
      throw new IllegalStateException(failures.get() + " decisions failed or were degraded, first: " + firstFailure.get());
    }
    double clientCpu = (jvmCpuNanos() - jvmCpu) / 1e3 / requests;
    return stats("Sluice (RedisStore, " + inflight + " in flight)", requests / seconds, cpu, clientCpu);
  }

  private static long jvmCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private Row stats(String client, double rps, double cpuBefore, double clientCpu) {
    double cpu = cpuSeconds() - cpuBefore;
    // cmdstat_fcall:calls=200000,usec=1234567,usec_per_call=6.17,rejected_calls=0,failed_calls=0
    String line = ((String) server.command("INFO", "commandstats")).lines()
        .filter(l -> l.startsWith(functions ? "cmdstat_fcall:" : "cmdstat_evalsha:")).findFirst()
        .orElseThrow(() -> new IllegalStateException("no " + (functions ? "FCALL" : "EVALSHA") + " was run"));
    long calls = Long.parseLong(field(line, "calls"));
    // Reset by CONFIG RESETSTAT with the command stats: the server's socket reads since.
    double reads = Double.parseDouble(info(server, "stats").get("total_reads_processed"));
    return new Row(client, rps, Double.parseDouble(field(line, "usec_per_call")), cpu * 1e6 / calls, calls / reads,
        clientCpu);
  }

  private static String field(String line, String name) {
    int at = line.indexOf(name + "=") + name.length() + 1;
    int end = line.indexOf(',', at);
    return line.substring(at, end < 0 ? line.length() : end);
  }

  private double cpuSeconds() {
    Map<String, String> cpu = info(server, "cpu");
    return Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
  }

  private static Map<String, String> info(Standalone server, String section) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String l : ((String) server.command("INFO", section)).split("\r?\n")) {
      int colon = l.indexOf(':');
      if (colon > 0 && !l.startsWith("#")) {
        m.put(l.substring(0, colon), l.substring(colon + 1).trim());
      }
    }
    return m;
  }

  private static double redisBenchmark(List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    StringBuilder all = new StringBuilder();
    double rps = -1;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        all.append(line).append('\n');
        // "EVALSHA ...","51234.56",...
        String[] f = line.split("\",\"");
        if (f.length > 1 && !f[0].equals("\"test")) {
          rps = Double.parseDouble(f[1]);
        }
      }
    }
    if (p.waitFor() != 0 || rps < 0 || all.toString().contains("ERR")) {
      throw new IllegalStateException("redis-benchmark failed: " + String.join(" ", cmd) + "\n" + all);
    }
    return rps;
  }

  private static void print(String what, String mode, Row r) {
    System.out.printf(Locale.ROOT, "| %s | %s | %s | %,.0f | %.2f | %.2f | %.1f | %s |%n", what, mode, r.client, r.perSecond,
        r.usecPerCall, r.cpuPerCall, r.callsPerRead,
        Double.isNaN(r.clientCpuPerCall) ? "" : String.format(Locale.ROOT, "%.1f", r.clientCpuPerCall));
  }
}
