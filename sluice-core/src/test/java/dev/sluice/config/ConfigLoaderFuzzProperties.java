package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FuzzCases;
import dev.sluice.testing.YamlFuzz;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * The native loader under hostile text: valid files mutated (see {@link YamlFuzz}), random text
 * and random bytes. Whatever it is given, it loads or throws {@link ConfigException} — never
 * another exception or error (a {@code NullPointerException}, a {@code ClassCastException}, a
 * {@code StackOverflowError}, an {@code OutOfMemoryError}) and never hangs; and a configuration it
 * loads is one the limiter puts in force and decides with, or refuses as a whole.
 */
@AddLifecycleHook(FuzzCases.class)
class ConfigLoaderFuzzProperties {
  /** A case that takes this long is stuck, not slow: the loader's work is linear in its input. */
  static final Duration HANG = Duration.ofSeconds(20);

  private static ExecutorService worker;
  private static Path dir;
  private static final YamlFuzz FUZZ = new YamlFuzz(seeds());

  static List<String> seeds() {
    List<String> seeds = new ArrayList<>(YamlFuzz.seedsIn(Path.of("..", "examples")));
    seeds.addAll(YamlFuzz.seedsIn(Path.of("src", "test", "resources", "config")));
    return seeds;
  }

  @BeforeContainer
  static void start() throws IOException {
    worker = Executors.newSingleThreadExecutor(r -> {
      // The reload poller and a request thread have stacks of this size or larger.
      Thread t = new Thread(null, r, "config-fuzz", 512 * 1024);
      t.setDaemon(true);
      return t;
    });
    dir = Files.createTempDirectory("sluice-config-fuzz");
  }

  @AfterContainer
  static void stop() throws IOException {
    worker.shutdownNow();
    Files.deleteIfExists(dir.resolve("limits.yaml"));
    Files.deleteIfExists(dir);
  }

  @Property
  @FuzzCases.Share(55)
  void mutatedConfigurationsLoadOrFailWithAConfigException(@ForAll("mutated") String text) {
    LoadedConfig loaded = loadOrReject(text, () -> ConfigLoader.parse(text, "fuzz.yaml"));
    Statistics.collect(loaded == null ? "rejected" : "loaded");
    if (loaded != null) {
      assertPutInForceAndDecides(loaded.rules(), text);
    }
  }

  @Property
  @FuzzCases.Share(30)
  void randomTextLoadsOrFailsWithAConfigException(@ForAll("randomText") String text) {
    LoadedConfig loaded = loadOrReject(text, () -> ConfigLoader.parse(text, "fuzz.yaml"));
    if (loaded != null) {
      assertPutInForceAndDecides(loaded.rules(), text);
    }
  }

  @Property
  @FuzzCases.Share(15)
  void randomBytesInAFileLoadOrFailWithAConfigException(@ForAll("bytes") byte[] bytes) throws IOException {
    Path file = dir.resolve("limits.yaml");
    Files.write(file, bytes);
    loadOrReject(java.util.HexFormat.of().formatHex(bytes), () -> ConfigLoader.load(file));
  }

  @Provide
  Arbitrary<String> mutated() {
    return FUZZ.mutated();
  }

  @Provide
  Arbitrary<String> randomText() {
    return YamlFuzz.randomText();
  }

  @Provide
  Arbitrary<byte[]> bytes() {
    // Valid files with bytes flipped, and plain random bytes.
    Arbitrary<byte[]> flipped = Arbitraries.randomValue(r -> {
      byte[] b = FUZZ.mutated().generator(1).next(r).value().getBytes(java.nio.charset.StandardCharsets.UTF_8);
      for (int i = 0, n = 1 + r.nextInt(4); i < n && b.length > 0; i++) {
        b[r.nextInt(b.length)] = (byte) r.nextInt(256);
      }
      return b;
    });
    return Arbitraries.oneOf(flipped, Arbitraries.bytes().array(byte[].class).ofMaxSize(300));
  }

  /**
   * What {@code load} returns, or null if it threw {@link ConfigException} with a message for
   * each problem; anything else fails the property, showing {@code input}.
   */
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

  /**
   * The rules of a loaded configuration are put in force — or refused whole by the store, the
   * rules in force staying — and every rule decides a request and a peek.
   */
  static void assertPutInForceAndDecides(RuleSet rules, String input) {
    RuleSet before = RuleSet.of(Rule.builder("before").window(1, Duration.ofSeconds(1)).build());
    try (RateLimiter limiter = Sluice.builder().store(MemoryStore.create()).rules(before).build()) {
      try {
        limiter.updateRules(rules);
      } catch (UnsupportedRuleException e) {
        assertThat(limiter.rules()).as(input).isSameAs(before);
        return;
      }
      for (Rule r : rules.rules()) {
        Decision peek = limiter.acquire(Request.of(r.name(), "k", 0));
        Decision one = limiter.acquire(Request.of(r.name(), "user:42", 1));
        assertThat(peek.items()).as(input).hasSize(1);
        assertThat(one.items()).as(input).hasSize(1);
      }
    } catch (RuntimeException e) {
      fail("a loaded configuration failed to decide: %s on:%n%s", e, clip(input));
    }
  }

  static String clip(String s) {
    return s.length() <= 4_000 ? s : s.substring(0, 4_000) + "... (" + s.length() + " characters)";
  }
}
