package dev.sluice.client;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.server.SluiceService;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.spi.Store;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A running {@code sluice serve} of this JVM on a free port, as the service's own end-to-end tests
 * start it, over a configuration directory a test writes rules into: the service loads them as
 * it loads any edited file (its poll), and {@link #putRules} waits until it has.
 */
final class ServiceUnderTest implements AutoCloseable {
  private static final String BASE = """
      limits:
        - name: base
          config:
            - limit: 1
              period: 1s
      """;

  private final Path dir;
  private final SluiceService service;

  private ServiceUnderTest(Path dir, SluiceService service) {
    this.dir = dir;
    this.service = service;
  }

  /**
   * A service on {@code store}, trusting request times (the conformance suite's explicit times).
   * Its store timeout is far above a loaded machine's pauses: a store call timing out would be
   * answered by the failure modes, and a few in a row fail the instance's readiness, which takes
   * it out of the client's routing; the suite checks decisions, not outages.
   */
  static ServiceUnderTest start(Store store) {
    return start(store, true, Duration.ofSeconds(5));
  }

  static ServiceUnderTest start(Store store, boolean trustRequestTime, Duration storeTimeout) {
    try {
      Path dir = Files.createTempDirectory("sluice-client");
      Files.writeString(dir.resolve("base.yaml"), BASE);
      SluiceService s = SluiceService.start(SluiceService.Settings.of(dir).withPort(0)
          .withPollInterval(Duration.ofMillis(10)).withDrainTimeout(Duration.ZERO)
          .withStoreTimeout(storeTimeout).withTrustRequestTime(trustRequestTime), store);
      return new ServiceUnderTest(dir, s);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (dev.sluice.config.ConfigException e) {
      throw new IllegalStateException(e);
    }
  }

  int port() {
    return service.port();
  }

  String address() {
    return "127.0.0.1:" + port();
  }

  SluiceService service() {
    return service;
  }

  /** Writes {@code yaml} as the file {@code name} and waits until the service has loaded it. */
  void putFile(String name, String yaml) {
    ConfigReloader reloader = service.reloader();
    long before = reloader.status().generation();
    try {
      Files.writeString(dir.resolve(name), yaml);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (reloader.status().generation() == before) {
      ConfigReloader.Status st = reloader.status();
      if (st.lastError() != null && st.lastErrorAt() != null && st.generation() == before
          && st.lastError().contains(name)) {
        throw new IllegalStateException("the service refused " + name + ": " + st.lastError() + "\n" + yaml);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the service did not load " + name + " within 10 s");
      }
      sleep(5);
    }
  }

  /** Puts {@code rules} in force on the service (in a file of their own, replacing the last such). */
  void putRules(RuleSet rules) {
    putFile("rules.yaml", RulesYaml.of(rules));
    for (Rule r : rules.rules()) {
      if (service.limiter().rules().get(r.name()) == null) {
        throw new IllegalStateException("rule " + r.name() + " is not in force on the service");
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    service.close();
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // A temporary directory left behind is harmless.
    }
  }
}
