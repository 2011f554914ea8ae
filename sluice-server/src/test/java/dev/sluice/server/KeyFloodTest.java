package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.server.cli.Main;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A flood of distinct long keys against {@code sluice serve} on the memory store, in a child JVM
 * with a small heap. The flood once raised {@code OutOfMemoryError} in the server's threads (1,500
 * requests of 100 distinct 512-byte keys with {@code -Xmx128m}), after which the process kept its
 * port and answered nothing: the key cap alone (1,000,000 keys of about 1 KB) allowed more than the
 * heap. The store is now bounded by bytes too.
 *
 * <p>CI runs exactly that flood. The long mode is the acceptance target, 2,000,000 keys with
 * {@code -Xmx256m}:
 *
 * <pre>
 * ./mvnw -q -B -ntp -o -pl sluice-server -am verify -Dtest=KeyFloodTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dsluice.flood.keys=2000000 -Dsluice.flood.heap=256m -Dsluice.flood.deadline=30m
 * </pre>
 *
 * It prints its figures (requests, time, RSS, heap, the store's keys and bytes) on standard output.
 */
class KeyFloodTest {
  private static final int KEYS = Integer.getInteger("sluice.flood.keys", 150_000);
  private static final String HEAP = System.getProperty("sluice.flood.heap", "128m");
  private static final Duration DEADLINE = Duration.parse("PT" + System.getProperty("sluice.flood.deadline", "50s"));
  /** The resident set allowed: the heap plus this much for the JVM's own memory (code, metaspace, threads, buffers). */
  private static final long NON_HEAP_RSS_MB = 256;
  private static final int ITEMS = 100;
  private static final int KEY_BYTES = 512;
  private static final int CLIENTS = 2;

  @TempDir
  Path dir;

  @Test
  void aFloodOfDistinct512ByteKeysUnderASmallHeapLeavesTheServiceAnsweringAndHeldKeysExact() throws Exception {
    // Ten minutes: every flood key stays live to the end, the worst case for memory.
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: checkout.new
            config:
              - limit: 5
                period: 10m
          - name: auth.createToken
            config:
              - limit: 20
                period: 60
        """);
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path log = dir.resolve("serve.log");
    Process p = new ProcessBuilder(java.toString(), "-Xmx" + HEAP, "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "serve", "--config", dir.toString(), "--host", "127.0.0.1", "--port", "0")
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      int port = awaitPort(p, log);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5)).build();
      String base = "http://127.0.0.1:" + port;

      String held = key("held", 0);
      for (int i = 0; i < 2; i++) {
        assertThat(post(http, base, one("checkout.new", held)).statusCode()).isEqualTo(200);
      }

      Flood flood = new Flood(http, base);
      long started = System.nanoTime();
      flood.run();
      double seconds = (System.nanoTime() - started) / 1e9;

      assertThat(p.isAlive()).as(tail(log)).isTrue();
      assertThat(flood.failures).as("requests that got no answer or an unexpected status").isEmpty();
      assertThat(flood.healthFailures).as("/healthz answers other than 200 within 5 s").isEmpty();
      assertThat(flood.healthChecks.get()).isPositive();
      assertThat(flood.requests.get()).isEqualTo((KEYS + ITEMS - 1) / ITEMS);

      // The key held from before the flood is decided exactly: 2 of 5 were taken.
      JsonNode h = ServiceClient.JSON.readTree(post(http, base, one("checkout.new", held)).body());
      assertThat(h.get("allowed").asBoolean()).isTrue();
      assertThat(h.get("items").get(0).get("windows").get(0).get("remaining").asLong()).isEqualTo(2);
      assertThat(post(http, base, one("checkout.new", held)).statusCode()).isEqualTo(200);
      assertThat(post(http, base, one("checkout.new", held)).statusCode()).isEqualTo(200);
      JsonNode over = ServiceClient.JSON.readTree(post(http, base, one("checkout.new", held)).body());
      assertThat(over.get("items").get(0).get("reason").asText()).isEqualTo("limit_exceeded");
      // Another rule still has its share of the store.
      assertThat(post(http, base, one("auth.createToken", "user:after-flood")).statusCode()).isEqualTo(200);

      String metrics = get(http, base, "/metrics").body();
      long rss = rssKb(p.pid());
      System.out.printf("key flood: %d keys of %d bytes in %d requests (%d admitted, %d store_full) in %.1f s with"
          + " -Xmx%s; VmRSS %d MB, heap used %s MB; store: %d keys, %s MB; /healthz %d checks, slowest %d ms%n",
          KEYS, KEY_BYTES, flood.requests.get(), flood.count(200), flood.count(429), seconds, HEAP, rss / 1024,
          heapUsedMb(p.pid()), (long) metric(metrics, "sluice_store_keys{rule=\"checkout.new\"}"),
          mb(metric(metrics, "sluice_store_bytes")), flood.healthChecks.get(), flood.slowestHealthMs.get());
      assertThat(p.isAlive()).isTrue();
      if (rss > 0) {
        assertThat(rss / 1024).as("VmRSS in MB").isLessThan(heapMb() + NON_HEAP_RSS_MB);
      }
    } finally {
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /** Sends the flood from {@link #CLIENTS} threads while another checks {@code /healthz}. */
  private static final class Flood {
    final HttpClient http;
    final String base;
    final AtomicInteger next = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
    final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<String> healthFailures = new ConcurrentLinkedQueue<>();
    final AtomicInteger healthChecks = new AtomicInteger();
    final AtomicLong slowestHealthMs = new AtomicLong();

    Flood(HttpClient http, String base) {
      this.http = http;
      this.base = base;
    }

    int count(int status) {
      AtomicInteger n = statuses.get(status);
      return n == null ? 0 : n.get();
    }

    void run() throws InterruptedException {
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      AtomicBoolean done = new AtomicBoolean();
      List<Thread> threads = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        threads.add(new Thread(() -> {
          while (failures.size() < 10) {
            int batch = next.getAndIncrement();
            int first = batch * ITEMS;
            if (first >= KEYS) {
              return;
            }
            if (System.nanoTime() > deadline) {
              failures.add("the flood did not finish within " + DEADLINE);
              return;
            }
            StringBuilder body = new StringBuilder("{\"items\":[");
            for (int i = first; i < Math.min(KEYS, first + ITEMS); i++) {
              body.append(i == first ? "" : ",").append("{\"rule\":\"checkout.new\",\"key\":\"")
                  .append(key("flood", i)).append("\"}");
            }
            body.append("]}");
            try {
              HttpResponse<String> r = post(http, base, body.toString());
              statuses.computeIfAbsent(r.statusCode(), s -> new AtomicInteger()).incrementAndGet();
              if (r.statusCode() != 200 && r.statusCode() != 429) {
                failures.add("status " + r.statusCode() + ": " + r.body().substring(0, Math.min(300, r.body().length())));
              }
            } catch (IOException e) {
              failures.add("request " + batch + ": " + e);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
            requests.incrementAndGet();
          }
        }, "flood-" + c));
      }
      Thread health = new Thread(() -> {
        while (!done.get()) {
          long t0 = System.nanoTime();
          try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/healthz"))
                .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
              healthFailures.add("status " + r.statusCode());
            }
          } catch (IOException e) {
            healthFailures.add(e.toString());
          } catch (InterruptedException e) {
            return;
          }
          slowestHealthMs.accumulateAndGet((System.nanoTime() - t0) / 1_000_000, Math::max);
          healthChecks.incrementAndGet();
          try {
            Thread.sleep(200);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "flood-health");
      threads.forEach(Thread::start);
      health.start();
      for (Thread t : threads) {
        t.join();
      }
      done.set(true);
      health.join();
    }
  }

  /** A distinct ASCII key of exactly {@link #KEY_BYTES} bytes. */
  static String key(String prefix, int i) {
    StringBuilder b = new StringBuilder(KEY_BYTES).append(prefix).append(':').append(i).append(':');
    while (b.length() < KEY_BYTES) {
      b.append('x');
    }
    return b.toString();
  }

  private static String one(String rule, String key) {
    return "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\"}";
  }

  static HttpResponse<String> post(HttpClient http, String base, String body) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create(base + "/v1/acquire")).timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("content-type", "application/json").build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(HttpClient http, String base, String path)
      throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static int awaitPort(Process p, Path log) throws Exception {
    Pattern serving = Pattern.compile("serving on port (\\d+)");
    int[] port = {-1};
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(30), () -> {
      Matcher m = serving.matcher(read(log));
      if (m.find()) {
        port[0] = Integer.parseInt(m.group(1));
      }
      return port[0] > 0 || !p.isAlive();
    });
    assertThat(port[0]).as(read(log)).isPositive();
    return port[0];
  }

  /** The resident set of process {@code pid} in KB, from {@code /proc}; -1 where there is none. */
  static long rssKb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux: no figure
    }
    return -1;
  }

  private static double metric(String text, String name) {
    for (String line : text.split("\n")) {
      if (line.startsWith(name + " ")) {
        return Double.parseDouble(line.substring(name.length() + 1).trim());
      }
    }
    return Double.NaN;
  }

  private static long heapMb() {
    long n = Long.parseLong(HEAP.replaceAll("[^0-9]", ""));
    return HEAP.toLowerCase().endsWith("g") ? n * 1024 : n;
  }

  /** The heap in use in process {@code pid}, from {@code jcmd GC.heap_info}; "?" if unknown. */
  private static String heapUsedMb(long pid) {
    try {
      Process j = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
          Long.toString(pid), "GC.heap_info").redirectErrorStream(true).start();
      String out = new String(j.getInputStream().readAllBytes());
      j.waitFor(10, TimeUnit.SECONDS);
      Matcher m = Pattern.compile("total (\\d+)K, used (\\d+)K").matcher(out);
      return m.find() ? (Long.parseLong(m.group(2)) / 1024) + " of " + (Long.parseLong(m.group(1)) / 1024) : "?";
    } catch (IOException e) {
      return "?";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "?";
    }
  }

  private static String mb(double bytes) {
    return Double.isNaN(bytes) ? "?" : String.format("%.1f", bytes / (1 << 20));
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      return "";
    }
  }

  private static String tail(Path f) {
    String s = read(f);
    return s.substring(Math.max(0, s.length() - 4000));
  }
}
