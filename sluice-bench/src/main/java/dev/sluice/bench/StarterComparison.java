package dev.sluice.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the Spring Boot starter's servlet filter costs a request: the application of
 * {@code sluice-bench-boot} (Spring MVC on Tomcat, a route decided per user on the memory store,
 * limits never reached) against the same jar started with {@code --sluice.enabled=false}. Each is
 * a process of its own, with the same JVM flags; wrk, a third process, loads one at a time.
 * Reports requests/s, the server process's CPU time (user + system, as the OS counts it) per
 * request answered, and latency quantiles, then the medians and the ratios with Sluice to
 * without.
 *
 * <p>A third application, on by default, runs the filter with the RateLimit fields on denials only
 * ({@code sluice.web.headers=on-denial}): the decision's cost without the fields' bytes.
 *
 * <p>Each repetition starts the applications afresh and loads each, unmeasured, until its JIT
 * compilers are quiet; then they are measured one after the other, which goes first rotating
 * between repetitions, each run preceded by a short unmeasured one (the other process had the
 * caches). Every answer must be a 2xx, and the application with Sluice must answer with the
 * RateLimit fields and the one without must not, or the comparison stops.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench,sluice-bench-boot -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.StarterComparison --reps 5
 * </pre>
 *
 * <p>Options: {@code --reps} (5), {@code --seconds} measured per run (15), {@code --warmup}
 * unmeasured before each run (5), {@code --process-warmup} at least and {@code --warmup-max} at
 * most after a start (20, 60), {@code --connections} and {@code --threads} of wrk (32, 1),
 * {@code --users} (10000), {@code --jvm} the applications' JVM flags
 * ({@code -Xms512m -Xmx512m -XX:+UseG1GC}), {@code --sluice-jvm} extra flags for the application
 * with Sluice only (e.g. a JFR recording; empty), {@code --app-jar}
 * ({@code sluice-bench-boot/target/sluice-bench-boot.jar}), {@code --raw} a directory for wrk's
 * output of every run (none), {@code --wrk} (wrk), {@code --on-denial} whether a third application
 * runs, with the filter but the RateLimit fields on denials only (true).
 */
public final class StarterComparison {
  private StarterComparison() {}

  private static final Pattern REQUESTS = Pattern.compile("(\\d+) requests in ([0-9.]+)(m?s)");
  private static final Pattern NON_2XX = Pattern.compile("Non-2xx or 3xx responses: (\\d+)");
  private static final Pattern ERRORS = Pattern.compile("Socket errors: (.*)");

  /** One measured run. */
  record Run(int rep, String app, double rps, double cpuMicros, double p50Millis, double p99Millis, double load) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new LinkedHashMap<>(Map.of("reps", "5", "seconds", "15", "warmup", "5",
        "process-warmup", "20", "warmup-max", "60", "connections", "32", "threads", "1", "users", "10000",
        "jvm", "-Xms512m -Xmx512m -XX:+UseG1GC", "app-jar", "sluice-bench-boot/target/sluice-bench-boot.jar"));
    o.put("sluice-jvm", "");
    o.put("raw", "");
    o.put("wrk", "wrk");
    o.put("on-denial", "true");
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length || !args[i].startsWith("--") || !o.containsKey(args[i].substring(2))) {
        throw new IllegalArgumentException("bad option '" + args[i] + "'; known, each with a value: " + o.keySet());
      }
      o.put(args[i].substring(2), args[i + 1]);
    }
    Path dir = Files.createTempDirectory("sluice-starter-");
    Path lua = dir.resolve("items.lua");
    try (var in = StarterComparison.class.getResourceAsStream("http/items.lua")) {
      Files.write(lua, in.readAllBytes());
    }
    Path raw = o.get("raw").isEmpty() ? null : Files.createDirectories(Path.of(o.get("raw")));
    System.out.println("## The starter's filter against the same application without Sluice, " + ZonedDateTime.now());
    System.out.println();
    System.out.println("- command: `java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.StarterComparison "
        + String.join(" ", args) + "`");
    System.out.println("- applications' JVM flags: `" + o.get("jvm") + "`; with Sluice also: `" + o.get("sluice-jvm")
        + "`; JDK " + System.getProperty("java.version"));
    System.out.println("- CPU: " + cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores; "
        + "load average before: " + loadAverage());
    System.out.println();
    System.out.println("| rep | application | warm-up s | requests/s | CPU µs/request | p50 ms | p99 ms | load avg |");
    System.out.println("|---:|---|---:|---:|---:|---:|---:|---:|");
    List<Run> runs = new ArrayList<>();
    int reps = Integer.parseInt(o.get("reps"));
    for (int rep = 1; rep <= reps; rep++) {
      List<App> apps = new ArrayList<>();
      try {
        apps.add(App.start("sluice", o, List.of(), o.get("sluice-jvm"), dir));
        apps.add(App.start("off", o, List.of("--sluice.enabled=false"), "", dir));
        if (Boolean.parseBoolean(o.get("on-denial"))) {
          apps.add(App.start("on-denial", o, List.of("--sluice.web.headers=on-denial"), o.get("sluice-jvm"), dir));
        }
        int[] warmed = new int[apps.size()];
        for (int i = 0; i < apps.size(); i++) {
          warmed[i] = warmUp(o, apps.get(i), lua);
        }
        for (int i = 0; i < apps.size(); i++) {
          int k = (rep - 1 + i) % apps.size();
          App a = apps.get(k);
          wrk(o, a, lua, Integer.parseInt(o.get("warmup")));
          double load = loadAverage1();
          long cpu0 = a.cpuNanos();
          String out = wrk(o, a, lua, Integer.parseInt(o.get("seconds")));
          long cpu1 = a.cpuNanos();
          if (raw != null) {
            Files.writeString(raw.resolve("rep" + rep + "-" + a.name + ".txt"), out);
          }
          Matcher m = REQUESTS.matcher(out);
          if (!m.find()) {
            throw new IllegalStateException("no request count in wrk's output: " + out);
          }
          long requests = Long.parseLong(m.group(1));
          double seconds = Double.parseDouble(m.group(2)) / (m.group(3).equals("ms") ? 1000 : 1);
          Run r = new Run(rep, a.name, requests / seconds, (cpu1 - cpu0) / 1e3 / requests, quantile(out, "50%"),
              quantile(out, "99%"), load);
          runs.add(r);
          System.out.printf(Locale.ROOT, "| %d | %s | %d | %,.0f | %.1f | %.2f | %.2f | %.2f |%n", r.rep, r.app,
              warmed[k], r.rps, r.cpuMicros, r.p50Millis, r.p99Millis, r.load);
        }
      } finally {
        for (App a : apps) {
          a.close();
        }
      }
    }
    summary(runs);
  }

  /**
   * Unmeasured load in 2-second runs: at least {@code --process-warmup} seconds, then until a run
   * in which the application's compilers compiled fewer than 10 methods, at most
   * {@code --warmup-max}. On a busy machine the compilers get a share of the CPU only, and their
   * time would count in the application's.
   */
  private static int warmUp(Map<String, String> o, App a, Path lua) throws Exception {
    int elapsed = 0;
    while (elapsed < Integer.parseInt(o.get("warmup-max"))) {
      long compiled = a.compiledMethods();
      wrk(o, a, lua, 2);
      elapsed += 2;
      if (elapsed >= Integer.parseInt(o.get("process-warmup")) && a.compiledMethods() - compiled < 10) {
        break;
      }
    }
    return elapsed;
  }

  /** wrk's output; it fails on a socket error or an answer that is not 2xx. */
  private static String wrk(Map<String, String> o, App a, Path lua, int seconds) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(o.get("wrk"), "-t", o.get("threads"), "-c", o.get("connections"),
        "-d", seconds + "s", "--latency", "-s", lua.toString(), "http://127.0.0.1:" + a.port + "/")
        .redirectErrorStream(true);
    pb.environment().put("SLUICE_USERS", o.get("users"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("wrk failed: " + out);
    }
    Matcher bad = NON_2XX.matcher(out);
    Matcher errors = ERRORS.matcher(out);
    if (bad.find() || errors.find()) {
      throw new IllegalStateException(a.name + ": not every request was answered 2xx (a limit bound, or the "
          + "application failed): " + out);
    }
    return out;
  }

  /** A latency quantile of wrk's {@code --latency} distribution, in milliseconds. */
  private static double quantile(String wrk, String label) {
    Matcher m = Pattern.compile("^\\s+" + Pattern.quote(label) + "\\s+([0-9.]+)(us|ms|s)\\s*$", Pattern.MULTILINE)
        .matcher(wrk);
    if (!m.find()) {
      return Double.NaN;
    }
    double v = Double.parseDouble(m.group(1));
    return switch (m.group(2)) {
      case "us" -> v / 1000;
      case "s" -> v * 1000;
      default -> v;
    };
  }

  /** Medians, their ratios with Sluice to without, and the range of the ratios within one repetition. */
  private static void summary(List<Run> runs) {
    List<Run> off = runs.stream().filter(r -> r.app.equals("off")).toList();
    for (String app : runs.stream().map(Run::app).filter(a -> !a.equals("off")).distinct().toList()) {
      List<Run> on = runs.stream().filter(r -> r.app.equals(app)).toList();
      System.out.println();
      System.out.println("`" + app + "` against `off`: medians of " + on.size() + " runs each; ratio = with Sluice / "
          + "without, of the medians [the range of the ratios within one repetition].");
      System.out.println();
      System.out.println("| | " + app + " | off | ratio |");
      System.out.println("|---|---:|---:|---:|");
      row("requests/s", on.stream().mapToDouble(Run::rps).toArray(), off.stream().mapToDouble(Run::rps).toArray(),
          "%,.0f");
      row("CPU µs/request", on.stream().mapToDouble(Run::cpuMicros).toArray(),
          off.stream().mapToDouble(Run::cpuMicros).toArray(), "%.1f");
      row("p50 ms", on.stream().mapToDouble(Run::p50Millis).toArray(),
          off.stream().mapToDouble(Run::p50Millis).toArray(), "%.2f");
      row("p99 ms", on.stream().mapToDouble(Run::p99Millis).toArray(),
          off.stream().mapToDouble(Run::p99Millis).toArray(), "%.2f");
    }
  }

  private static void row(String what, double[] on, double[] off, String format) {
    double[] perRep = new double[Math.min(on.length, off.length)];
    for (int i = 0; i < perRep.length; i++) {
      perRep[i] = on[i] / off[i];
    }
    Arrays.sort(perRep);
    double a = FloorComparison.median(on);
    double b = FloorComparison.median(off);
    System.out.printf(Locale.ROOT, "| %s | " + format + " | " + format + " | **%.3f** [%.3f–%.3f] |%n", what, a, b,
        a / b, perRep[0], perRep[perRep.length - 1]);
  }

  /** An application process: started, checked, stopped on close. */
  private static final class App implements AutoCloseable {
    final String name;
    final Process process;
    final int port;

    private App(String name, Process process, int port) {
      this.name = name;
      this.process = process;
      this.port = port;
    }

    /**
     * Starts the jar and waits until it answers a request; the application with Sluice must
     * answer with the RateLimit fields and the other without, or neither is what is meant.
     */
    static App start(String name, Map<String, String> o, List<String> appArgs, String extraJvm, Path dir)
        throws Exception {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      for (String f : (o.get("jvm") + " " + extraJvm).strip().split("\\s+")) {
        if (!f.isEmpty()) {
          cmd.add(f);
        }
      }
      cmd.addAll(List.of("-jar", o.get("app-jar"), "--server.port=" + port, "--server.address=127.0.0.1"));
      cmd.addAll(appArgs);
      Path log = dir.resolve(name + "-" + port + ".log");
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
      App app = new App(name, p, port);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(1)).build();
      HttpRequest probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/items/1"))
          .header("X-User", "probe").build();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (System.nanoTime() < deadline) {
        if (!p.isAlive()) {
          throw new IllegalStateException(name + " exited: " + Files.readString(log));
        }
        try {
          HttpResponse<String> r = http.send(probe, HttpResponse.BodyHandlers.ofString());
          boolean fields = r.headers().firstValue("RateLimit-Policy").isPresent();
          if (r.statusCode() != 200 || fields != name.equals("sluice")) {
            app.close();
            throw new IllegalStateException(name + " answered " + r.statusCode() + " " + r.headers().map() + " "
                + r.body());
          }
          if (name.equals("on-denial") && !deniesWithFields(http, probe)) {
            app.close();
            throw new IllegalStateException(name + " never denied the probe with the RateLimit fields");
          }
          return app;
        } catch (IOException notYet) {
          // not listening yet
        }
        Thread.sleep(200);
      }
      app.close();
      throw new IllegalStateException(name + " did not answer within 120 s");
    }

    /** Whether one user's requests are denied, within 700 (50 / 1 s and 600 / 60 s), with the fields. */
    private static boolean deniesWithFields(HttpClient http, HttpRequest probe) throws Exception {
      for (int i = 0; i < 700; i++) {
        HttpResponse<String> r = http.send(probe, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 429) {
          return r.headers().firstValue("RateLimit-Policy").isPresent();
        }
      }
      return false;
    }

    /** The methods the process's JIT compilers have compiled so far ({@code jstat -compiler}). */
    long compiledMethods() throws IOException, InterruptedException {
      Process jstat = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jstat").toString(),
          "-compiler", String.valueOf(process.pid())).redirectErrorStream(true).start();
      String out = new String(jstat.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      jstat.waitFor();
      String[] lines = out.strip().split("\n");
      try {
        return Long.parseLong(lines[lines.length - 1].strip().split("\\s+")[0]);
      } catch (NumberFormatException e) {
        throw new IllegalStateException("jstat -compiler " + process.pid() + " answered: " + out);
      }
    }

    /** The process's CPU time so far, user + system ({@code /proc/<pid>/stat}'s utime + stime). */
    long cpuNanos() throws IOException {
      String stat = Files.readString(Path.of("/proc", String.valueOf(process.pid()), "stat"));
      // The command name, field 2, may hold spaces: the fields counted from after its ')'.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return ticks * (1_000_000_000L / CLOCK_TICKS);
    }

    @Override
    public void close() {
      process.destroy();
      try {
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  /** {@code getconf CLK_TCK}: 100 on Linux for x86 and arm. */
  private static final long CLOCK_TICKS = 100;

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "?";
    }
  }

  private static double loadAverage1() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  private static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
          .findFirst().map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("?");
    } catch (IOException e) {
      return "?";
    }
  }
}
