package dev.sluice.server;

import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.spi.Store;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.metrics.SluiceMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.util.ResourceLeakDetector;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * The whole service wired together: a limiter on the given store with the metrics listener, the
 * configuration reloader, and the server. {@code sluice serve} runs one; tests start their own
 * on a free port.
 */
public final class SluiceService implements AutoCloseable {
  private final RateLimiter limiter;
  private final ConfigReloader reloader;
  private final SluiceServer server;
  private final PrometheusMeterRegistry registry;

  /**
   * How to run the service.
   *
   * @param config a configuration file or directory
   * @param host the address to bind
   * @param port the port (0: any free port)
   * @param pollInterval how often the configuration is checked for changes
   * @param adminToken if not null, required by {@code /v1/reset}
   * @param drainTimeout how long shutdown waits for requests in flight
   * @param storeTimeout how long a remote store may take before failure modes decide
   */
  public record Settings(Path config, String host, int port, Duration pollInterval, String adminToken,
      Duration drainTimeout, Duration storeTimeout, double localShare) {
    public Settings {
      Objects.requireNonNull(config, "config");
      Objects.requireNonNull(host, "host");
      Objects.requireNonNull(pollInterval, "pollInterval");
      Objects.requireNonNull(drainTimeout, "drainTimeout");
      Objects.requireNonNull(storeTimeout, "storeTimeout");
      if (!(localShare > 0 && localShare <= 1)) {
        throw new IllegalArgumentException("localShare must be in (0, 1], was " + localShare);
      }
    }

    /**
     * Defaults: all interfaces, port 8080, a check every 500 ms, open reset, 15 s of draining, a
     * store timeout of 250 ms.
     */
    public static Settings of(Path config) {
      return new Settings(config, "0.0.0.0", 8080, Duration.ofMillis(500), null, Duration.ofSeconds(15),
          Duration.ofMillis(250), 1.0);
    }

    /** The share of each limit that {@code failure_mode: local} holds in this instance. */
    public Settings withLocalShare(double share) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, share);
    }

    public Settings withHost(String h) {
      return new Settings(config, h, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare);
    }

    public Settings withPort(int p) {
      return new Settings(config, host, p, pollInterval, adminToken, drainTimeout, storeTimeout, localShare);
    }

    public Settings withPollInterval(Duration d) {
      return new Settings(config, host, port, d, adminToken, drainTimeout, storeTimeout, localShare);
    }

    public Settings withAdminToken(String t) {
      return new Settings(config, host, port, pollInterval, t, drainTimeout, storeTimeout, localShare);
    }

    public Settings withStoreTimeout(Duration d) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, d, localShare);
    }

    public Settings withDrainTimeout(Duration d) {
      return new Settings(config, host, port, pollInterval, adminToken, d, storeTimeout, localShare);
    }
  }

  private SluiceService(RateLimiter limiter, ConfigReloader reloader, SluiceServer server,
      PrometheusMeterRegistry registry) {
    this.limiter = limiter;
    this.reloader = reloader;
    this.server = server;
    this.registry = registry;
  }

  /**
   * Loads the configuration, starts the server and the reloader. Turns Netty's buffer leak
   * sampling off for the process unless {@code -Dio.netty.leakDetection.level} is set.
   *
   * @param store where state lives; closed with the service
   * @throws ConfigException if the configuration is bad (nothing is started then, and the
   *     store is closed)
   */
  public static SluiceService start(Settings s, Store store) throws ConfigException {
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      // Netty samples buffers to report leaks of its own; the service gains nothing from it and
      // pays about a tenth of its CPU per decision (docs/service.md, "Performance notes").
      // -Dio.netty.leakDetection.level turns it back on. It is a setting of the whole process.
      ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SluiceMetrics metrics = new SluiceMetrics(registry);
    metrics.watchStore(store);
    RateLimiter limiter = Sluice.builder().store(store).storeTimeout(s.storeTimeout()).localShare(s.localShare()).listener(metrics)
        .build();
    ConfigReloader reloader;
    try {
      reloader = new ConfigReloader(s.config(), limiter, metrics, Clock.systemUTC());
    } catch (ConfigException | RuntimeException e) {
      limiter.close();
      throw e;
    }
    metrics.configLoaded(reloader.current());
    SluiceServer server;
    try {
      server = SluiceServer.builder().limiter(limiter).config(reloader).prometheus(registry).host(s.host())
          .port(s.port()).adminToken(s.adminToken()).maxKeyBytes(Sluice.DEFAULT_MAX_KEY_BYTES)
          .drain(Duration.ofMillis(Math.min(500, s.drainTimeout().toMillis())), s.drainTimeout()).build().start();
    } catch (RuntimeException e) {
      reloader.close();
      limiter.close();
      throw e;
    }
    reloader.start(s.pollInterval());
    return new SluiceService(limiter, reloader, server, registry);
  }

  public int port() {
    return server.port();
  }

  public RateLimiter limiter() {
    return limiter;
  }

  public ConfigReloader reloader() {
    return reloader;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Drains and stops the server, then closes the limiter and its store. */
  @Override
  public void close() {
    try {
      server.close();
    } finally {
      limiter.close();
    }
  }
}
