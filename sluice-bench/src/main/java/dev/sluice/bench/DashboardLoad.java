package dev.sluice.bench;

import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether an open dashboard slows the service: {@code sluice serve} (memory store) with 10,000
 * rules and 100,000 denied keys, {@code POST /v1/acquire} driven by wrk on one of them, in runs
 * that alternate without and with a dashboard polling {@code GET /v1/dashboard} as the page does
 * (every second, with the page's files fetched first). Prints each run's decisions/s, the medians
 * and the dashboard's answer times as Markdown.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.DashboardLoad --seconds 10 --pairs 3
 * </pre>
 */
public final class DashboardLoad {
  private DashboardLoad() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new LinkedHashMap<>(Map.of("seconds", "10", "pairs", "3", "connections", "64",
        "threads", "1", "keys", "10000", "rules", "10000", "denied-keys", "100000", "wrk", "wrk"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--") || !o.containsKey(args[i].substring(2))) {
        throw new IllegalArgumentException("unknown option '" + args[i] + "'; known: " + o.keySet());
      }
      o.put(args[i].substring(2), args[i + 1]);
    }
    int rules = Integer.parseInt(o.get("rules"));
    int deniedKeys = Integer.parseInt(o.get("denied-keys"));
    Path dir = Files.createTempDirectory("sluice-dashboard-load-");
    Path lua = dir.resolve("acquire.lua");
    try (InputStream in = HttpLoad.class.getResourceAsStream("http/acquire.lua")) {
      Files.write(lua, in.readAllBytes());
    }
    StringBuilder yaml = new StringBuilder(HttpLoad.REAL);
    for (int i = 1; i < rules; i++) {
      yaml.append("  - name: r").append(i).append("\n    config:\n      - limit: 1\n        period: 1h\n");
    }
    Path config = dir.resolve("limits.yaml");
    Files.writeString(config, yaml);
    try (SluiceService service = SluiceService.start(
        SluiceService.Settings.of(config).withHost("127.0.0.1").withPort(0), MemoryStore.create())) {
      RateLimiter limiter = service.limiter();
      for (int i = 0; i < deniedKeys; i++) {
        String rule = "r" + (1 + i % (rules - 1));
        limiter.acquire(rule, "user:" + i);
        limiter.acquire(rule, "user:" + i);
      }
      String base = "http://127.0.0.1:" + service.port();
      List<String> cmd = List.of(o.get("wrk"), "-t", o.get("threads"), "-c", o.get("connections"),
          "-d", o.get("seconds") + "s", "-s", lua.toString(), base + "/v1/acquire");
      List<String> warm = new ArrayList<>(cmd);
      warm.set(warm.indexOf("-d") + 1, "20s");
      HttpLoad.wrk(warm, o.get("keys"));
      HttpClient idle = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      List<Long> idleMicros = new ArrayList<>();
      int bytes = 0;
      for (int i = 0; i < 20; i++) {
        long t0 = System.nanoTime();
        bytes = idle.send(HttpRequest.newBuilder(URI.create(base + "/v1/dashboard")).build(),
            HttpResponse.BodyHandlers.ofByteArray()).body().length;
        idleMicros.add((System.nanoTime() - t0) / 1_000);
      }
      idleMicros.sort(null);
      List<Double> without = new ArrayList<>();
      List<Double> with = new ArrayList<>();
      List<Long> answerMicros = new ArrayList<>();
      StringBuilder runs = new StringBuilder();
      int pairs = Integer.parseInt(o.get("pairs"));
      for (int p = 0; p < pairs; p++) {
        // Alternated, and each pair in the other order than the one before: drift on a shared
        // machine falls on both sides.
        for (boolean dashboard : p % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
          double rate = dashboard ? withDashboard(base, cmd, o.get("keys"), answerMicros)
              : Double.parseDouble(HttpLoad.wrk(cmd, o.get("keys")).get("rps"));
          (dashboard ? with : without).add(rate);
          runs.append(String.format(Locale.ROOT, "| %d | %s | %,.0f |%n", p + 1, dashboard ? "open" : "closed", rate));
        }
      }
      double a = median(without);
      double b = median(with);
      answerMicros.sort(null);
      System.out.println("## An open dashboard, " + ZonedDateTime.now());
      System.out.println();
      System.out.printf(Locale.ROOT, "%d rules, %d denied keys; wrk -t%s -c%s, %s s per run, keys %s%n%n", rules,
          deniedKeys, o.get("threads"), o.get("connections"), o.get("seconds"), o.get("keys"));
      System.out.println("| pair | dashboard | decisions/s |");
      System.out.println("|---:|---|---:|");
      System.out.print(runs);
      System.out.println();
      System.out.printf(Locale.ROOT, "median without: %,.0f/s; with: %,.0f/s; change %+.1f%%%n", a, b,
          100.0 * (b - a) / a);
      System.out.printf(Locale.ROOT, "dashboard answer (%d bytes) without load: median %.1f ms of 20%n", bytes,
          idleMicros.get(idleMicros.size() / 2) / 1000.0);
      System.out.printf(Locale.ROOT, "dashboard answer during load: median %.1f ms, max %.1f ms (%d polls)%n",
          answerMicros.get(answerMicros.size() / 2) / 1000.0, answerMicros.get(answerMicros.size() - 1) / 1000.0,
          answerMicros.size());
    }
  }

  private static double withDashboard(String base, List<String> cmd, String keys, List<Long> answerMicros)
      throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    for (String f : List.of("/", "/dashboard.js", "/dashboard.css")) {
      http.send(HttpRequest.newBuilder(URI.create(base + f)).build(), HttpResponse.BodyHandlers.discarding());
    }
    AtomicBoolean stop = new AtomicBoolean();
    List<Long> times = new ArrayList<>();
    Thread poller = new Thread(() -> {
      while (!stop.get()) {
        long t0 = System.nanoTime();
        try {
          HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/dashboard"))
              .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
          if (r.statusCode() != 200) {
            throw new IllegalStateException("dashboard answered " + r.statusCode());
          }
          synchronized (times) {
            times.add((System.nanoTime() - t0) / 1_000);
          }
          Thread.sleep(1_000);
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }, "dashboard-poller");
    poller.start();
    try {
      return Double.parseDouble(HttpLoad.wrk(cmd, keys).get("rps"));
    } finally {
      stop.set(true);
      poller.interrupt();
      poller.join();
      synchronized (times) {
        answerMicros.addAll(times);
      }
    }
  }

  private static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }
}
