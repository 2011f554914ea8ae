package dev.sluice.bench;

import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.SluiceService;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * HTTP load on the service: starts it on 127.0.0.1 (memory store, then Redis on a server of its
 * own started by the test kit) with the rule
 * {@code auth.createToken} (20/60s + 5/3s, or the admitting variant), drives
 * {@code POST /v1/acquire} with wrk over keep-alive connections, and prints decisions/s and
 * latency as Markdown. Each measured run follows a warm-up of at least {@code --warmup} (5) and at
 * most {@code --warmup-max} (120) seconds that lasts until the service's code is compiled
 * (see {@code warmUp}).
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.HttpLoad --seconds 15 --connections 64 --threads 1 \
 *     --stores memory,redis --rules real,admitting --keys 10000,1
 * </pre>
 */
public final class HttpLoad {
  private HttpLoad() {}

  static final String REAL = """
      limits:
        - name: auth.createToken
          config:
            - limit: 20
              period: 60
            - limit: 5
              period: 3
      """;

  static final String ADMITTING = """
      limits:
        - name: auth.createToken
          config:
            - limit: 2000000
              period: 60
            - limit: 500000
              period: 3
      """;

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new LinkedHashMap<>(Map.of("seconds", "15", "connections", "64", "threads", "1",
        "keys", "10000,1", "rules", "real,admitting", "wrk", "wrk", "stores", "memory,redis", "warmup", "5",
        "warmup-max", "120"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--") || !o.containsKey(args[i].substring(2))) {
        throw new IllegalArgumentException("unknown option '" + args[i] + "'; known: " + o.keySet());
      }
      o.put(args[i].substring(2), args[i + 1]);
    }
    System.out.println("## HTTP load, " + ZonedDateTime.now());
    System.out.println();
    System.out.println("| store | rule | keys | wrk threads | connections | warm-up s | decisions/s | allowed | p50 µs | p99 µs | p99.9 µs | errors |");
    System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    Path dir = Files.createTempDirectory("sluice-http-load-");
    Path lua = dir.resolve("acquire.lua");
    try (InputStream in = HttpLoad.class.getResourceAsStream("http/acquire.lua")) {
      Files.write(lua, in.readAllBytes());
    }
    for (String storeName : o.get("stores").split(",")) {
      try (Standalone redis = storeName.equals("redis") ? Standalone.start(Flavor.REDIS) : null) {
        run(o, dir, lua, storeName, redis);
      }
    }
  }

  private static void run(Map<String, String> o, Path dir, Path lua, String storeName, Standalone redis)
      throws Exception {
    for (String rule : o.get("rules").split(",")) {
      Path config = dir.resolve("limits.yaml");
      Files.writeString(config, rule.equals("admitting") ? ADMITTING : REAL);
      for (String keys : o.get("keys").split(",")) {
        if (redis != null) {
          redis.command("FLUSHALL");
        }
        Store store = redis == null ? MemoryStore.create() : RedisStore.connect(redis.uri());
        try (SluiceService service = SluiceService.start(
            SluiceService.Settings.of(config).withHost("127.0.0.1").withPort(0), store)) {
          List<String> cmd = List.of(o.get("wrk"), "-t", o.get("threads"), "-c", o.get("connections"),
              "-d", o.get("seconds") + "s", "--latency", "-s", lua.toString(),
              "http://127.0.0.1:" + service.port() + "/v1/acquire");
          int warmed = warmUp(List.of(o.get("wrk"), "-t", o.get("threads"), "-c", o.get("connections"), "-d", "2s",
              "-s", lua.toString(), "http://127.0.0.1:" + service.port() + "/v1/acquire"), keys,
              Integer.parseInt(o.get("warmup")), Integer.parseInt(o.get("warmup-max")));
          Map<String, String> r = wrk(cmd, keys);
          long allowed = Long.parseLong(r.get("allowed"));
          long denied = Long.parseLong(r.get("denied"));
          System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %d | %,.0f | %.1f%% | %s | %s | %s | %s |%n",
              storeName, rule, keys, o.get("threads"), o.get("connections"), warmed, Double.parseDouble(r.get("rps")),
              100.0 * allowed / Math.max(1, allowed + denied), r.get("p50us"), r.get("p99us"), r.get("p999us"),
              r.get("other"));
          System.out.println("<!-- " + String.join(" ", cmd) + " -->");
        }
      }
    }
  }

  /**
   * Runs 2-second wrk runs until the service's JIT compilers (in this process) have gone quiet
   * and the rate has stopped rising: at least {@code minSeconds}, then until a run during which
   * the compilers spent less than 250 ms and which was no more than 5% faster than the one
   * before, at most {@code maxSeconds}. On a busy machine the compilers get only a share of the
   * CPU, and a fixed warm-up left the first measured run on code still being compiled.
   *
   * @return the seconds spent
   */
  private static int warmUp(List<String> cmd, String keys, int minSeconds, int maxSeconds)
      throws IOException, InterruptedException {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    int elapsed = 0;
    double previous = 0;
    while (elapsed < maxSeconds) {
      long compiledBefore = jit.getTotalCompilationTime();
      double rate = Double.parseDouble(wrk(cmd, keys).get("rps"));
      elapsed += 2;
      boolean compilersQuiet = jit.getTotalCompilationTime() - compiledBefore < 250;
      if (elapsed >= minSeconds && compilersQuiet && rate <= previous * 1.05) {
        break;
      }
      previous = rate;
    }
    return elapsed;
  }

  static Map<String, String> wrk(List<String> cmd, String keys) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("SLUICE_KEYS", keys);
    Process p = pb.start();
    Map<String, String> r = new LinkedHashMap<>();
    StringBuilder all = new StringBuilder();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        all.append(line).append('\n');
        if (line.startsWith("Requests/sec:")) {
          r.put("rps", line.substring("Requests/sec:".length()).trim());
        } else if (line.startsWith("sluice: ")) {
          for (String kv : line.substring(8).split(" ")) {
            String[] f = kv.split("=");
            r.put(f[0], f[1]);
          }
        }
      }
    }
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0 || !r.containsKey("rps")) {
      throw new IllegalStateException("wrk failed: " + all);
    }
    return r;
  }
}
