package dev.sluice.server;

import dev.sluice.DecisionListener;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.Ticker;
import dev.sluice.config.ConfigException;
import dev.sluice.spi.Store;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.metrics.DecisionRates;
import dev.sluice.server.metrics.DegradedDecisionLog;
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
   * @param adminToken if not null, required by admin endpoints ({@code /v1/reset}); if null, they
   *     are open on a loopback address and refused on any other
   * @param drainTimeout how long shutdown waits, after the grace, for requests in flight
   * @param storeTimeout how long a remote store may take before failure modes decide
   * @param shutdownGrace how long shutdown keeps serving, {@code /readyz} failing, before it
   *     refuses new connections
   * @param denialCacheKeys how many denials of a remote store the limiter keeps; 0 for none
   * @param maxInFlight the most requests the server holds at once; 0 for its default (1024, or
   *     fewer on a small heap)
   * @param maxConnections the most connections the server holds at once
   * @param envoy how the Envoy service answers and merges domains
   * @param trustRequestTime whether {@code POST /v1/acquire} honours a body's {@code "atMicros"}
   *     (replay and tests only)
   */
  public record Settings(Path config, String host, int port, Duration pollInterval, String adminToken,
      Duration drainTimeout, Duration storeTimeout, double localShare, Duration shutdownGrace, int denialCacheKeys,
      int maxInFlight, int maxConnections, EnvoyOptions envoy, boolean trustRequestTime) {
    public Settings {
      Objects.requireNonNull(envoy, "envoy");
      Objects.requireNonNull(config, "config");
      Objects.requireNonNull(host, "host");
      Objects.requireNonNull(pollInterval, "pollInterval");
      Objects.requireNonNull(drainTimeout, "drainTimeout");
      Objects.requireNonNull(storeTimeout, "storeTimeout");
      Objects.requireNonNull(shutdownGrace, "shutdownGrace");
      if (!Double.isNaN(localShare) && !(localShare > 0 && localShare <= 1)) {
        throw new IllegalArgumentException("localShare must be in (0, 1] (or NaN: 1 / the instances), was "
            + localShare);
      }
      if (denialCacheKeys < 0) {
        throw new IllegalArgumentException("denialCacheKeys must be >= 0, was " + denialCacheKeys);
      }
      if (maxInFlight < 0) {
        throw new IllegalArgumentException("maxInFlight must be >= 1 (or 0 for the default), was " + maxInFlight);
      }
      if (maxConnections < 1) {
        throw new IllegalArgumentException("maxConnections must be >= 1, was " + maxConnections);
      }
    }

    /**
     * Defaults: {@code 127.0.0.1}, port 8080, a check every 500 ms, no admin token, no shutdown
     * grace (an embedding application decides when to stop; {@code sluice serve} gives 5 s), 15 s
     * of draining, a store timeout of 250 ms, the local share counted from the instances, the
     * limiter's default denial cache, the server's default bound on requests in flight (1024, fewer
     * on a small heap) and 4096 connections.
     */
    public static Settings of(Path config) {
      return new Settings(config, "127.0.0.1", 8080, Duration.ofMillis(500), null, Duration.ofSeconds(15),
          Duration.ofMillis(250), Double.NaN, Duration.ZERO, Sluice.DEFAULT_DENIAL_CACHE_KEYS, 0,
          SluiceServer.DEFAULT_MAX_CONNECTIONS, EnvoyOptions.DEFAULT, false);
    }

    /**
     * The share of each limit that {@code failure_mode: local} holds in this instance; NaN (the
     * default) for 1 / the instances sharing the store, counted through heartbeats in it.
     */
    public Settings withLocalShare(double share) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout,
          share, shutdownGrace, denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withHost(String h) {
      return new Settings(config, h, port, pollInterval, adminToken, drainTimeout, storeTimeout,
          localShare, shutdownGrace, denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withPort(int p) {
      return new Settings(config, host, p, pollInterval, adminToken, drainTimeout, storeTimeout,
          localShare, shutdownGrace, denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withPollInterval(Duration d) {
      return new Settings(config, host, port, d, adminToken, drainTimeout, storeTimeout, localShare, shutdownGrace,
          denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withAdminToken(String t) {
      return new Settings(config, host, port, pollInterval, t, drainTimeout, storeTimeout, localShare, shutdownGrace,
          denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withStoreTimeout(Duration d) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, d, localShare, shutdownGrace,
          denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withShutdownGrace(Duration d) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare, d,
          denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    public Settings withDrainTimeout(Duration d) {
      return new Settings(config, host, port, pollInterval, adminToken, d, storeTimeout, localShare, shutdownGrace,
          denialCacheKeys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }

    /** The most requests the server holds at once; 0 for its default. */
    public Settings withMaxInFlight(int n) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare,
          shutdownGrace, denialCacheKeys, n, maxConnections, envoy, trustRequestTime);
    }

    public Settings withMaxConnections(int n) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare,
          shutdownGrace, denialCacheKeys, maxInFlight, n, envoy, trustRequestTime);
    }

    /** How the Envoy service answers, and whether Envoy files of one domain merge. */
    public Settings withEnvoy(EnvoyOptions e) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare,
          shutdownGrace, denialCacheKeys, maxInFlight, maxConnections, e, trustRequestTime);
    }

    /**
     * Whether {@code POST /v1/acquire} decides a body's {@code "atMicros"} at that time; off by
     * default, for a caller choosing its time can free its own windows.
     */
    public Settings withTrustRequestTime(boolean trust) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare,
          shutdownGrace, denialCacheKeys, maxInFlight, maxConnections, envoy, trust);
    }

    /** How many denials of a remote store to keep ({@code Sluice.Builder#denialCache}); 0 for none. */
    public Settings withDenialCache(int keys) {
      return new Settings(config, host, port, pollInterval, adminToken, drainTimeout, storeTimeout, localShare,
          shutdownGrace, keys, maxInFlight, maxConnections, envoy, trustRequestTime);
    }
  }

  /**
   * A store call that failed with an {@code OutOfMemoryError} (on the store client's own threads)
   * would otherwise be answered by the failure modes, as if the store were down.
   */
  private static final DecisionListener FATAL_STORE_ERRORS = new DecisionListener() {
    @Override
    public void onStoreError(dev.sluice.Request request, Throwable error) {
      FatalErrors.check(error);
    }
  };

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
    StoreHealth health = new StoreHealth(Ticker.system());
    DecisionRates rates = new DecisionRates(Ticker.system());
    metrics.watchStore(store);
    metrics.watchHealth(health);
    Sluice.Builder builder = Sluice.builder();
    if (!Double.isNaN(s.localShare())) {
      builder.localShare(s.localShare());
    }
    RateLimiter limiter = builder.store(store).storeTimeout(s.storeTimeout())
        .denialCache(s.denialCacheKeys()).listener(metrics)
        .listener(health).listener(rates).listener(new DegradedDecisionLog()).listener(FATAL_STORE_ERRORS).build();
    ConfigReloader reloader;
    try {
      reloader = new ConfigReloader(s.config(), limiter, metrics, Clock.systemUTC(), s.envoy().mergeDomains());
    } catch (ConfigException | RuntimeException e) {
      limiter.close();
      throw e;
    }
    metrics.configLoaded(reloader.current());
    SluiceServer server;
    try {
      server = SluiceServer.builder().limiter(limiter).config(reloader).envoy(s.envoy()).prometheus(registry).host(s.host())
          .port(s.port()).adminToken(s.adminToken()).storeHealth(health).decisionRates(rates).store(store)
          .shutdownGrace(s.shutdownGrace()).drainTimeout(s.drainTimeout())
          .maxInFlight(s.maxInFlight()).maxConnections(s.maxConnections())
          .trustRequestTime(s.trustRequestTime()).build().start();
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

  /**
   * Shuts the server down (readiness fails, the grace, then draining: {@link SluiceServer}), then
   * closes the limiter and its store.
   */
  @Override
  public void close() {
    try {
      server.close();
    } finally {
      limiter.close();
    }
  }
}
