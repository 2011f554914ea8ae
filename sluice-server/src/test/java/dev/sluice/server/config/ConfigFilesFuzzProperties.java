package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.testing.FuzzCases;
import dev.sluice.testing.YamlFuzz;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * The service's configuration loader — native files and Envoy's format, told apart by their
 * top-level key — under hostile text: valid files of both formats mutated (see {@link YamlFuzz})
 * and random text. It loads or throws {@link ConfigException}, nothing else, never naming a
 * library class; and a reload the service rejects leaves the rules in force, and the
 * configuration it reports, exactly as they were.
 */
@AddLifecycleHook(FuzzCases.class)
class ConfigFilesFuzzProperties {
  static final Duration HANG = Duration.ofSeconds(20);
  /** The Envoy example of docs/service.md with Sluice's extension. */
  static final String ENVOY_EXTENDED = """
      domain: auth
      descriptors:
        - key: user
          rate_limit:
            name: per_user
            replaces:
              - name: per_ip
          sluice:
            algorithm: sliding_log
            failure_mode: closed
            windows:
              - {limit: 20, period: 1m}
              - {limit: 5, period: 3s}
        - key: remote_address
          rate_limit: {unit: second, requests_per_unit: 10, name: per_ip}
          sluice: {algorithm: token_bucket}
        - key: queue
          rate_limit: {unit: minute, requests_per_unit: 10}
          sluice: {algorithm: leaky_bucket, max_wait: 500ms}
        - key: path
          value: /health
          rate_limit: {unlimited: true}
        - key: path
          value: /blocked
          shadow_mode: true
          detailed_metric: true
          rate_limit: {unit: hour, requests_per_unit: 0}
      """;

  private static final YamlFuzz FUZZ = new YamlFuzz(seeds());
  private static ExecutorService worker;
  private static Path dir;

  static List<String> seeds() {
    List<String> seeds = new ArrayList<>(YamlFuzz.seedsIn(Path.of("..", "examples")));
    seeds.addAll(YamlFuzz.seedsIn(Path.of("src", "test", "resources", "envoy", "readme")));
    seeds.add(ENVOY_EXTENDED);
    return seeds;
  }

  private static PrintStream log;

  @BeforeContainer
  static void start() throws IOException {
    // Each rejected reload is logged, as it should be: tens of thousands here, to no reader.
    log = System.err;
    System.setErr(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
    worker = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(null, r, "config-fuzz", 512 * 1024);
      t.setDaemon(true);
      return t;
    });
    dir = Files.createTempDirectory("sluice-config-fuzz");
  }

  @AfterContainer
  static void stop() throws IOException {
    System.setErr(log);
    worker.shutdownNow();
    try (var files = Files.list(dir)) {
      for (Path p : files.toList()) {
        Files.deleteIfExists(p);
      }
    }
    Files.deleteIfExists(dir);
  }

  @Property
  @FuzzCases.Share(50)
  void mutatedFilesOfEitherFormatLoadOrFailWithAConfigException(@ForAll("mutated") String text) {
    ServiceConfig c = loadOrReject(text, () -> ConfigFiles.load(Map.of(Path.of("fuzz.yaml"), text)));
    Statistics.collect(c == null ? "rejected" : c.domains().isEmpty() ? "native loaded" : "envoy loaded");
  }

  @Property
  @FuzzCases.Share(20)
  void randomTextLoadsOrFailsWithAConfigException(@ForAll("randomText") String text) {
    loadOrReject(text, () -> ConfigFiles.load(Map.of(Path.of("fuzz.yaml"), text)));
  }

  /**
   * The service's reload path, as the poller runs it: the good file is replaced by a mutated
   * one; rejected, the limiter's rules, the configuration reported and its generation stay.
   */
  @Property
  @FuzzCases.Share(30)
  void aRejectedReloadLeavesTheRulesInForce(@ForAll("mutated") String text) throws Exception {
    Path file = dir.resolve("limits.yaml");
    Files.writeString(file, ENVOY_EXTENDED);
    AtomicReference<String> rejected = new AtomicReference<>();
    try (RateLimiter limiter = Sluice.builder().build()) {
      ConfigReloader reloader = new ConfigReloader(file, limiter, (ok, c, error) -> rejected.set(ok ? null : error),
          Clock.systemUTC(), 0);
      RuleSet rules = limiter.rules();
      ServiceConfig config = reloader.current();
      // As an editor would save it: a lone surrogate becomes '?'.
      Files.write(file, text.getBytes(StandardCharsets.UTF_8));
      Boolean reloaded = loadOrReject(text, reloader::check);
      if (Boolean.TRUE.equals(reloaded)) {
        assertThat(reloader.status().generation()).isEqualTo(2);
        assertThat(reloader.current().rules()).isSameAs(limiter.rules());
      } else {
        assertThat(limiter.rules()).as(text).isSameAs(rules);
        assertThat(reloader.current()).as(text).isSameAs(config);
        assertThat(reloader.status().generation()).isEqualTo(1);
        if (!text.equals(ENVOY_EXTENDED)) {
          assertThat(rejected.get()).as(text).isNotBlank();
          assertThat(reloader.status().lastError()).as(text).isEqualTo(rejected.get());
        }
      }
    }
  }

  @Provide
  Arbitrary<String> mutated() {
    return FUZZ.mutated();
  }

  @Provide
  Arbitrary<String> randomText() {
    return YamlFuzz.randomText();
  }

  static <T> T loadOrReject(String input, Callable<T> load) {
    Future<T> f = worker.submit(load);
    try {
      return f.get(HANG.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof ConfigException ce) {
        assertThat(ce.problems()).as(input).isNotEmpty();
        ce.problems().forEach(p -> assertThat(p.message()).as(input).isNotBlank().hasSizeLessThanOrEqualTo(1_000)
            .doesNotContain("org.yaml", "snakeyaml", "com.fasterxml", "jackson", "java.lang", "Exception"));
        return null;
      }
      StringWriter trace = new StringWriter();
      c.printStackTrace(new PrintWriter(trace));
      return fail("the loader threw %s on:%n%s%n%s", c, clip(input), clip(trace.toString()));
    } catch (TimeoutException e) {
      f.cancel(true);
      return fail("the loader took more than %s on:%n%s", HANG, clip(input));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return fail("interrupted");
    }
  }

  static String clip(String s) {
    return s.length() <= 4_000 ? s : s.substring(0, 4_000) + "... (" + s.length() + " characters)";
  }
}
