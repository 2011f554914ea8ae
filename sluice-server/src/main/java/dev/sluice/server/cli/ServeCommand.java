package dev.sluice.server.cli;

import dev.sluice.Sluice;
import dev.sluice.Ticker;
import dev.sluice.memory.MemoryStore;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.SluiceService;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.spi.Store;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code sluice serve}: the HTTP JSON API and Envoy's gRPC rate limit and quota services on one port, until
 * the process is told to stop (SIGTERM, SIGINT), when it drains the requests in flight.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Run the service: the HTTP JSON API and Envoy's gRPC rate limit and quota services on one port.",
        "The configuration (a file, or a directory of native and Envoy files) is reloaded when it changes."})
final class ServeCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

  @Option(names = "--config", required = true, paramLabel = "PATH",
      description = "configuration file or directory (native 'limits:' and Envoy 'domain:' files)")
  Path config;

  @Option(names = "--store", defaultValue = "memory", paramLabel = "memory|URI",
      description = "where state lives: memory, or redis://, rediss://, redis-sentinel://, redis-cluster:// "
          + "(default: ${DEFAULT-VALUE})")
  String store;

  @Option(names = "--port", defaultValue = "8080", description = "port for HTTP and gRPC (default: ${DEFAULT-VALUE})")
  int port;

  @Option(names = "--host", defaultValue = "127.0.0.1", paramLabel = "ADDR",
      description = "address to bind; beyond loopback, admin endpoints need --admin-token (default: ${DEFAULT-VALUE})")
  String host;

  @Option(names = "--poll-interval", defaultValue = "500ms", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "how often the configuration is checked for changes (default: ${DEFAULT-VALUE})")
  Duration pollInterval;

  @Option(names = "--store-timeout", defaultValue = "250ms", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "how long the store may take before failure modes decide (default: ${DEFAULT-VALUE})")
  Duration storeTimeout;

  @Option(names = "--shutdown-grace", defaultValue = "5s", paramLabel = "DURATION",
      converter = GraceConverter.class,
      description = "on SIGTERM, how long /readyz answers 503 while everything is still served, so that balancers "
          + "notice; 0 for none (default: ${DEFAULT-VALUE})")
  Duration shutdownGrace;

  @Option(names = "--drain-timeout", defaultValue = "15s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "after the grace, how long shutdown waits at most for requests in flight "
          + "(default: ${DEFAULT-VALUE})")
  Duration drainTimeout;

  @Option(names = "--local-share", defaultValue = "auto", paramLabel = "SHARE",
      description = "share of each limit that rules with failure_mode: local hold in this instance while the store "
          + "is unreachable: a number in (0, 1], or auto for 1 / the instances sharing the store, counted through "
          + "heartbeats in it (default: ${DEFAULT-VALUE})")
  String localShare;

  @Option(names = "--max-keys", defaultValue = "1000000", paramLabel = "N",
      description = "memory store only: the most keys held; when full, new keys are denied with store_full "
          + "(default: ${DEFAULT-VALUE})")
  long maxKeys;

  @Option(names = "--max-store-bytes", paramLabel = "SIZE", converter = ByteSizeConverter.class,
      description = "memory store only: the most heap its keys may hold, e.g. 64m or 1g; each rule is guaranteed "
          + "a share of it and of --max-keys, and new keys of a rule whose share is full are denied with store_full "
          + "(default: a quarter of the maximum heap)")
  Long maxStoreBytes;

  @Option(names = "--denial-cache", defaultValue = "" + Sluice.DEFAULT_DENIAL_CACHE_KEYS, paramLabel = "N",
      description = "remote stores only: how many denied keys this instance answers itself until just before their "
          + "cost could fit, without a store call; 0 turns it off (default: ${DEFAULT-VALUE})")
  int denialCache;

  @Option(names = "--max-in-flight", paramLabel = "N",
      description = "the most requests held at once, over every connection; past it a request is answered 503 "
          + "(gRPC: RESOURCE_EXHAUSTED) without being decided (default: 1024, or fewer so that bodies of the largest "
          + "size held at once take at most an eighth of the maximum heap)")
  Integer maxInFlight;

  @Option(names = "--max-connections", defaultValue = "" + SluiceServer.DEFAULT_MAX_CONNECTIONS, paramLabel = "N",
      description = "the most connections held at once; one more is closed when accepted (default: ${DEFAULT-VALUE})")
  int maxConnections;

  @Option(names = "--admin-token", defaultValue = "${env:SLUICE_ADMIN_TOKEN}", paramLabel = "TOKEN",
      description = "if set, admin endpoints (POST /v1/reset, the policy endpoints) need 'Authorization: Bearer "
          + "TOKEN'; if not, they are open on loopback and refused on any other address (default: $SLUICE_ADMIN_TOKEN)")
  String adminToken;

  @Option(names = "--trust-request-time",
      description = "POST /v1/acquire decides a body's atMicros at that time instead of refusing it; for replay "
          + "and tests only: a caller choosing its time can free its own windows (default: off)")
  boolean trustRequestTime;

  @Option(names = "--envoy-response-headers",
      description = "Envoy API: add RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the descriptor "
          + "closest to its limit to each answer, for Envoy to add to the response (envoyproxy/ratelimit's "
          + "LIMIT_RESPONSE_HEADERS_ENABLED); off by default: no headers")
  boolean envoyResponseHeaders;

  @Option(names = "--envoy-dynamic-metadata",
      description = "Envoy API: describe the request and the metadata of the limits that passed in each answer's "
          + "dynamic_metadata (RESPONSE_DYNAMIC_METADATA)")
  boolean envoyDynamicMetadata;

  @Option(names = "--envoy-shadow-mode",
      description = "Envoy API: the overall code is always OK, the statuses still say which descriptors are over "
          + "their limit (SHADOW_MODE)")
  boolean envoyShadowMode;

  @Option(names = "--envoy-merge-domains",
      description = "Envoy files of the same domain are merged instead of refused (MERGE_DOMAIN_CONFIG)")
  boolean envoyMergeDomains;

  /** {@code auto} (NaN: 1 / the instances) or a number in (0, 1]. */
  private static double localShare(String text) {
    if (text.equals("auto")) {
      return Double.NaN;
    }
    double share;
    try {
      share = Double.parseDouble(text);
    } catch (NumberFormatException e) {
      share = Double.NaN;
    }
    if (!(share > 0 && share <= 1)) {
      throw new CliException("sluice serve: --local-share must be auto or in (0, 1], was " + text);
    }
    return share;
  }

  @Override
  public Integer call() throws InterruptedException {
    if (port < 0 || port > 65535) {
      throw new CliException("sluice serve: --port must be between 0 and 65535, was " + port);
    }
    double share = localShare(localShare);
    if (denialCache < 0) {
      throw new CliException("sluice serve: --denial-cache must be >= 0 keys, was " + denialCache);
    }
    if (maxInFlight != null && maxInFlight < 1) {
      throw new CliException("sluice serve: --max-in-flight must be >= 1, was " + maxInFlight);
    }
    if (maxConnections < 1) {
      throw new CliException("sluice serve: --max-connections must be >= 1, was " + maxConnections);
    }
    if (maxKeys < 1) {
      throw new CliException("sluice serve: --max-keys must be >= 1, was " + maxKeys);
    }
    Store s = store.equals("memory")
        ? MemoryStore.builder().maxKeys(maxKeys)
            .maxBytes(maxStoreBytes != null ? maxStoreBytes : MemoryStore.defaultMaxBytes()).build()
        : Stores.open("sluice serve", store, Ticker.system());
    LOG.info("store: {}", s.describe());
    SluiceService.Settings settings = SluiceService.Settings.of(config).withHost(host).withPort(port)
        .withPollInterval(pollInterval).withStoreTimeout(storeTimeout).withDrainTimeout(drainTimeout)
        .withShutdownGrace(shutdownGrace)
        .withLocalShare(share)
        .withDenialCache(denialCache)
        .withEnvoy(new EnvoyOptions(envoyResponseHeaders, envoyDynamicMetadata, envoyShadowMode, envoyMergeDomains))
        .withMaxInFlight(maxInFlight == null ? 0 : maxInFlight).withMaxConnections(maxConnections)
        .withTrustRequestTime(trustRequestTime)
        .withAdminToken(adminToken == null || adminToken.isEmpty() ? null : adminToken);
    SluiceService service;
    try {
      service = SluiceService.start(settings, s);
    } catch (ConfigException e) {
      throw new CliException("sluice serve: the configuration is not valid:\n" + e.getMessage());
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      service.close();
      stopped.countDown();
    }, "sluice-shutdown"));
    LOG.info("serving on port {}; SIGTERM or SIGINT drains and stops", service.port());
    stopped.await();
    return Main.EXIT_OK;
  }

  /** Durations as configuration files write them ({@code 500ms}, {@code 2s}, {@code PT0.5S}). */
  static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      Duration d = GraceConverter.parse(value);
      if (d.isZero()) {
        throw new TypeConversionException("'" + value + "' must be a positive duration");
      }
      return d;
    }
  }

  /** As {@link DurationConverter}, where zero means none. */
  static final class GraceConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return parse(value);
    }

    static Duration parse(String value) {
      if (value.strip().equals("0")) {
        return Duration.ZERO;
      }
      Duration d;
      try {
        d = ConfigLoader.parseDuration(value, "the value");
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
      if (d.isNegative()) {
        throw new TypeConversionException("'" + value + "' must not be negative");
      }
      return d;
    }
  }
}
