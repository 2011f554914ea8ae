package dev.sluice.bench;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.grpc.GrpcClients;
import com.linecorp.armeria.common.util.EventLoopGroups;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.io.File;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
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
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code sluice serve} (memory store) against {@link FloorServer}, Armeria answering the same
 * requests with a fixed answer of the same size and headers: same run, same load tools, same JVM
 * flags, each server a process of its own and the load generator a third (wrk for HTTP; this JVM
 * for gRPC, {@link GrpcLoad}'s callers). Reports, per protocol and key count, requests/s, the
 * server process's CPU time per request (user + system, from the OS) and the p99 latency, and the
 * service's ratios to the floor.
 *
 * <p>Each repetition starts both servers afresh; each case (protocol × keys) then runs the two
 * one after the other, the order alternating between cases and repetitions, each a warm-up and a
 * measured run. The floor's answers are the service's own, recorded at the start: its denial of
 * {@code POST /v1/acquire} (status, {@code RateLimit-Policy}, {@code RateLimit},
 * {@code Retry-After}, the JSON body) and of {@code ShouldRateLimit}, which is what it answers
 * almost always under the load's rule (20/60 s + 5/3 s) once warm.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.FloorComparison --reps 3 \
 *     --warmup 10 --seconds 15 --keys 10000,1 --protocols http,grpc
 * </pre>
 *
 * <p>Options: {@code --reps} (3), {@code --process-warmup} per protocol when a server starts
 * (20), {@code --warmup} at least and {@code --warmup-max} at most per run (10, 60; see
 * {@code warmUp}), {@code --seconds} measured per run (15),
 * {@code --keys} (10000,1), {@code --protocols} (http,grpc), {@code --connections} for wrk and
 * {@code --inflight} for gRPC (64, 64), {@code --jvm} the servers' JVM flags
 * ({@code -Xms512m -Xmx512m -XX:+UseG1GC}), {@code --sluice-jar} the service's jar
 * ({@code sluice=sluice-server/target/sluice.jar}; several as {@code name=path,name=path}, each
 * measured against the same floor in turn, to compare two builds of the service in one run),
 * {@code --sluice-jvm} extra flags for the service alone (e.g. a JFR recording; empty),
 * {@code --wrk} (wrk).
 */
public final class FloorComparison {
  private FloorComparison() {}

  /** One measured run. */
  record Run(int rep, String protocol, int keys, String server, int warmedSeconds, double rps, double cpuMicros,
      double p99Micros, double load, long errors) {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new LinkedHashMap<>(Map.of("reps", "3", "warmup", "10", "seconds", "15",
        "keys", "10000,1", "protocols", "http,grpc", "connections", "64", "inflight", "64", "process-warmup", "20",
        "jvm", "-Xms512m -Xmx512m -XX:+UseG1GC", "sluice-jar", "sluice=sluice-server/target/sluice.jar"));
    o.put("sluice-jvm", "");
    o.put("wrk", "wrk");
    o.put("warmup-max", "60");
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--") || !o.containsKey(args[i].substring(2))) {
        throw new IllegalArgumentException("unknown option '" + args[i] + "'; known: " + o.keySet());
      }
      o.put(args[i].substring(2), args[i + 1]);
    }
    Path dir = Files.createTempDirectory("sluice-floor-");
    Path config = Files.createDirectories(dir.resolve("config"));
    Files.writeString(config.resolve("limits.yaml"), HttpLoad.REAL);
    Files.writeString(config.resolve("envoy.yaml"), GrpcLoad.ENVOY);
    Path lua = dir.resolve("acquire.lua");
    try (var in = FloorComparison.class.getResourceAsStream("http/acquire.lua")) {
      Files.write(lua, in.readAllBytes());
    }
    System.out.println("## The service against its framework's floor, " + ZonedDateTime.now());
    System.out.println();
    System.out.println("- command: `java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.FloorComparison "
        + String.join(" ", args) + "`");
    System.out.println("- servers' JVM flags: `" + o.get("jvm") + "`; sluice: `" + o.get("sluice-jar") + "`");
    System.out.println("- CPU: " + cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores; "
        + "load average before: " + loadAverage());
    System.out.println();

    try (ClientFactory factory = ClientFactory.builder().workerGroup(EventLoopGroups.newEventLoopGroup(1), true)
        .build()) {
      recordAnswers(o, config, dir, factory);
      System.out.println("| rep | protocol | keys | server | warm-up s | requests/s | CPU µs/request | p99 µs | errors "
          + "| load avg |");
      System.out.println("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|");
      List<Run> runs = new ArrayList<>();
      int reps = Integer.parseInt(o.get("reps"));
      Map<String, String> jars = jars(o);
      for (int rep = 1; rep <= reps; rep++) {
        List<Proc> servers = new ArrayList<>();
        try {
          servers.add(startFloor(o, dir));
          for (var jar : jars.entrySet()) {
            servers.add(startSluice(o, jar.getKey(), jar.getValue(), config, dir));
          }
          // A fresh process compiles for longer than one case's warm-up lasts on a busy machine: each
          // server first takes every protocol for --process-warmup seconds, unmeasured.
          for (Proc p : servers) {
            for (String protocol : o.get("protocols").split(",")) {
              warmUp(o, protocol, 10_000, p, lua, factory, Integer.parseInt(o.get("process-warmup")));
            }
          }
          int c = 0;
          for (String protocol : o.get("protocols").split(",")) {
            for (String k : o.get("keys").split(",")) {
              int keys = Integer.parseInt(k);
              // Each case starts with the next server in turn, so each is first as often as the others.
              int first = (rep + c++) % servers.size();
              for (int i = 0; i < servers.size(); i++) {
                Proc p = servers.get((first + i) % servers.size());
                Run r = measure(o, rep, protocol, keys, p, lua, factory);
                runs.add(r);
                System.out.printf(Locale.ROOT, "| %d | %s | %,d | %s | %d | %,.0f | %.2f | %,.0f | %d | %.2f |%n",
                    r.rep, r.protocol, r.keys, r.server, r.warmedSeconds, r.rps, r.cpuMicros, r.p99Micros, r.errors,
                    r.load);
              }
            }
          }
        } finally {
          for (Proc p : servers) {
            p.close();
          }
        }
      }
      for (String name : jars.keySet()) {
        summary(runs, name);
      }
    }
  }

  /**
   * Unmeasured load on {@code p} in 2-second slices: at least {@code minSeconds}, then until a
   * slice in which the server compiled fewer than 10 methods and this process's compilers (the
   * gRPC client's) spent less than 250 ms, at most {@code --warmup-max} seconds. On a busy machine
   * the compilers get a share of the CPU only, and a run on code still being compiled measures the
   * compilers: their CPU time counts in the server's.
   *
   * @return the seconds spent
   */
  private static int warmUp(Map<String, String> o, String protocol, int keys, Proc p, Path lua,
      ClientFactory factory, int minSeconds) throws Exception {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    int max = Integer.parseInt(o.get("warmup-max"));
    int elapsed = 0;
    while (elapsed < max) {
      long compiled = p.compiledMethods();
      long compiling = jit.getTotalCompilationTime();
      if (protocol.equals("http")) {
        HttpLoad.wrk(withDuration(wrk(o, p, lua), 2), String.valueOf(keys));
      } else {
        GrpcLoad.drive(stub(p, factory), GrpcLoad.requests(keys), Integer.parseInt(o.get("inflight")), 2);
      }
      elapsed += 2;
      if (elapsed >= minSeconds && p.compiledMethods() - compiled < 10
          && jit.getTotalCompilationTime() - compiling < 250) {
        break;
      }
    }
    return elapsed;
  }

  private static List<String> wrk(Map<String, String> o, Proc p, Path lua) {
    return List.of(o.get("wrk"), "-t", "1", "-c", o.get("connections"), "--latency", "-s", lua.toString(),
        "http://127.0.0.1:" + p.port + "/v1/acquire");
  }

  private static RateLimitServiceGrpc.RateLimitServiceStub stub(Proc p, ClientFactory factory) {
    return GrpcClients.builder("http://127.0.0.1:" + p.port).factory(factory)
        .build(RateLimitServiceGrpc.RateLimitServiceStub.class);
  }

  private static Run measure(Map<String, String> o, int rep, String protocol, int keys, Proc p, Path lua,
      ClientFactory factory) throws Exception {
    int seconds = Integer.parseInt(o.get("seconds"));
    int warmed = warmUp(o, protocol, keys, p, lua, factory, Integer.parseInt(o.get("warmup")));
    double load = loadAverage1();
    if (protocol.equals("http")) {
      List<String> base = wrk(o, p, lua);
      long cpu0 = p.cpuNanos();
      Map<String, String> r = HttpLoad.wrk(withDuration(base, seconds), String.valueOf(keys));
      long cpu1 = p.cpuNanos();
      double rps = Double.parseDouble(r.get("rps"));
      long answered = Long.parseLong(r.get("allowed")) + Long.parseLong(r.get("denied"));
      long total = answered + Long.parseLong(r.get("other"));
      return new Run(rep, protocol, keys, p.name, warmed, rps, (cpu1 - cpu0) / 1e3 / Math.max(1, total),
          Double.parseDouble(r.get("p99us")), load, Long.parseLong(r.get("other")));
    }
    RateLimitServiceGrpc.RateLimitServiceStub stub = stub(p, factory);
    var requests = GrpcLoad.requests(keys);
    int inflight = Integer.parseInt(o.get("inflight"));
    long cpu0 = p.cpuNanos();
    GrpcLoad.Stats s = GrpcLoad.drive(stub, requests, inflight, seconds);
    long cpu1 = p.cpuNanos();
    // drive() waits for the calls still in flight at the end, which the server also answered.
    return new Run(rep, protocol, keys, p.name, warmed, s.done / s.seconds, (cpu1 - cpu0) / 1e3 / Math.max(1, s.done),
        s.quantile(0.99) / 1e3, load, s.errors);
  }

  private static List<String> withDuration(List<String> wrk, int seconds) {
    List<String> cmd = new ArrayList<>(wrk);
    cmd.addAll(1, List.of("-d", seconds + "s"));
    return cmd;
  }

  /** The service jars to compare with the floor, by name: {@code name=path,...} (a bare path is "sluice"). */
  private static Map<String, String> jars(Map<String, String> o) {
    Map<String, String> jars = new LinkedHashMap<>();
    for (String j : o.get("sluice-jar").split(",")) {
      int eq = j.indexOf('=');
      jars.put(eq < 0 ? "sluice" : j.substring(0, eq), j.substring(eq + 1));
    }
    return jars;
  }

  /**
   * Medians per case of one service jar and the floor, and the service's ratios to the floor (of
   * the medians, and per repetition).
   */
  private static void summary(List<Run> runs, String name) {
    System.out.println();
    System.out.println("`" + name + "` against the floor: medians; ratios are " + name + " / floor of the medians, "
        + "and [the range of the ratios within one repetition].");
    System.out.println();
    System.out.println("| protocol | keys | floor req/s | " + name + " req/s | ratio | floor CPU µs | " + name
        + " CPU µs | ratio | floor p99 µs | " + name + " p99 µs | ratio |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    Map<String, List<Run>> byCase = new TreeMap<>();
    for (Run r : runs) {
      byCase.computeIfAbsent(r.protocol + "/" + String.format(Locale.ROOT, "%06d", r.keys), x -> new ArrayList<>())
          .add(r);
    }
    for (List<Run> c : byCase.values()) {
      List<Run> floor = c.stream().filter(r -> r.server.equals("floor")).toList();
      List<Run> sluice = c.stream().filter(r -> r.server.equals(name)).toList();
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %s | %,d ", c.get(0).protocol,
          c.get(0).keys));
      for (Metric m : Metric.values()) {
        double f = median(floor.stream().mapToDouble(m::of).toArray());
        double s = median(sluice.stream().mapToDouble(m::of).toArray());
        double[] perRep = new double[Math.min(floor.size(), sluice.size())];
        for (int i = 0; i < perRep.length; i++) {
          perRep[i] = m.of(sluice.get(i)) / m.of(floor.get(i));
        }
        Arrays.sort(perRep);
        line.append(String.format(Locale.ROOT, "| %s | %s | **%.2f** [%.2f–%.2f] ", m.format(f), m.format(s), s / f,
            perRep[0], perRep[perRep.length - 1]));
      }
      System.out.println(line.append('|'));
    }
  }

  private enum Metric {
    RPS, CPU, P99;

    double of(Run r) {
      return switch (this) {
        case RPS -> r.rps;
        case CPU -> r.cpuMicros;
        case P99 -> r.p99Micros;
      };
    }

    String format(double v) {
      return this == CPU ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%,.0f", v);
    }
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  /**
   * Records the service's denial, over HTTP and gRPC, as the floor's answers: a fresh service
   * process, one key asked until the rule denies it.
   */
  private static void recordAnswers(Map<String, String> o, Path config, Path dir, ClientFactory factory)
      throws Exception {
    try (Proc sluice = startSluice(o, "sluice", jars(o).values().iterator().next(), config, dir)) {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sluice.port + "/v1/acquire"))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"auth.createToken\",\"key\":\"user:0000000\"}"))
          .build();
      HttpResponse<byte[]> denial = null;
      for (int i = 0; i < 50 && denial == null; i++) {
        HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() == 429) {
          denial = r;
        }
      }
      if (denial == null) {
        throw new IllegalStateException("the service did not deny 50 requests for one key");
      }
      StringBuilder text = new StringBuilder().append(denial.statusCode()).append('\n');
      Set<String> framework = Set.of("content-length", "date", "server", "connection", "keep-alive");
      denial.headers().map().forEach((name, values) -> {
        if (!framework.contains(name.toLowerCase(Locale.ROOT))) {
          values.forEach(v -> text.append(name).append(": ").append(v).append('\n'));
        }
      });
      text.append('\n').append(new String(denial.body(), StandardCharsets.UTF_8));
      Files.writeString(dir.resolve("http-answer.txt"), text);

      RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = GrpcClients
          .builder("http://127.0.0.1:" + sluice.port).factory(factory)
          .build(RateLimitServiceGrpc.RateLimitServiceBlockingStub.class);
      RateLimitResponse grpc = null;
      for (int i = 0; i < 50 && grpc == null; i++) {
        RateLimitResponse r = stub.shouldRateLimit(GrpcLoad.requests(1)[0]);
        if (r.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT) {
          grpc = r;
        }
      }
      if (grpc == null) {
        throw new IllegalStateException("the service did not deny 50 gRPC calls for one key");
      }
      Files.write(dir.resolve("grpc-answer.bin"), grpc.toByteArray());
      System.out.println("The floor's answers, recorded from the service:");
      System.out.println();
      System.out.println("```");
      System.out.println(text.toString().strip());
      System.out.println();
      System.out.println("ShouldRateLimit (" + grpc.getSerializedSize() + " bytes): "
          + grpc.toString().replaceAll("\\s+", " ").strip());
      System.out.println("```");
      System.out.println();
    }
  }

  private static Proc startFloor(Map<String, String> o, Path dir) throws Exception {
    int port = freePort();
    List<String> cmd = java(o.get("jvm"));
    cmd.addAll(List.of("-cp", benchJar(), FloorServer.class.getName(), "--port", String.valueOf(port),
        "--http-answer", dir.resolve("http-answer.txt").toString(),
        "--grpc-answer", dir.resolve("grpc-answer.bin").toString()));
    return Proc.start("floor", cmd, port, dir);
  }

  private static Proc startSluice(Map<String, String> o, String name, String jar, Path config, Path dir)
      throws Exception {
    int port = freePort();
    List<String> cmd = java(o.get("jvm") + " " + o.get("sluice-jvm"));
    cmd.addAll(List.of("-jar", jar, "serve", "--config", config.toString(), "--host", "127.0.0.1",
        "--port", String.valueOf(port), "--shutdown-grace", "0"));
    return Proc.start(name, cmd, port, dir);
  }

  private static List<String> java(String flags) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String f : flags.strip().split("\\s+")) {
      if (!f.isEmpty()) {
        cmd.add(f);
      }
    }
    return cmd;
  }

  private static String benchJar() throws Exception {
    return new File(FloorComparison.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A server process: started, waited for until it answers {@code /healthz}, stopped on close. */
  private static final class Proc implements AutoCloseable {
    final String name;
    final Process process;
    final int port;

    private Proc(String name, Process process, int port) {
      this.name = name;
      this.process = process;
      this.port = port;
    }

    static Proc start(String name, List<String> cmd, int port, Path dir) throws Exception {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(dir.resolve(name + "-" + port + ".log").toFile()).start();
      Proc proc = new Proc(name, p, port);
      // Interrupted (^C), the comparison leaves no server behind.
      Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(1)).build();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (System.nanoTime() < deadline) {
        if (!p.isAlive()) {
          throw new IllegalStateException(name + " exited: " + Files.readString(dir.resolve(name + "-" + port + ".log")));
        }
        try {
          if (http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
              HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
            return proc;
          }
        } catch (IOException notYet) {
          // not listening yet
        }
        Thread.sleep(200);
      }
      proc.close();
      throw new IllegalStateException(name + " did not answer /healthz within 120 s");
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

    /** The process's CPU time so far (user + system), as the OS counts it. */
    long cpuNanos() {
      return process.toHandle().info().totalCpuDuration().orElseThrow().toNanos();
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
