package dev.sluice.server;

import com.linecorp.armeria.common.SessionProtocol;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.grpc.GrpcService;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.envoy.EnvoyRateLimitService;
import dev.sluice.server.envoy.GrpcErrors;
import dev.sluice.server.http.HttpApi;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Sluice service: the HTTP JSON API and Envoy's gRPC rate limit service on one port. Closing
 * it stops accepting connections, lets requests in flight finish (up to the drain timeout), then
 * stops the reloader. The limiter belongs to the caller.
 */
public final class SluiceServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceServer.class);

  private final Server server;
  private final ConfigReloader config;

  private SluiceServer(Builder b) {
    ServerBuilder sb = Server.builder();
    sb.port(new InetSocketAddress(b.host, b.port), SessionProtocol.HTTP);
    sb.gracefulShutdownTimeout(b.drainQuietPeriod, b.drainTimeout);
    // Every handler runs on the event loop and never blocks (a remote store answers on its own
    // client's threads). Armeria's shared loops, two per CPU, are kept: one per CPU costs about 5%
    // less CPU per decision but, sharing the CPUs with other processes, it answered fewer
    // decisions per second (docs/service.md, "Performance notes").
    // The Server header tells anyone which HTTP library and version answer.
    sb.disableServerHeader();
    new HttpApi(b.limiter, b.config, b.prometheus, b.maxKeyBytes, b.maxBodyBytes, b.adminToken, b.storeHealth)
        .bind(sb);
    // Reflection lets grpcurl and similar tools call the service without its .proto files.
    sb.service(GrpcService.builder()
        .exceptionHandler(new GrpcErrors())
        .addService(new EnvoyRateLimitService(b.limiter, () -> b.config.current().domains()))
        .addService(ProtoReflectionServiceV1.newInstance())
        .build());
    this.server = sb.build();
    this.config = b.config;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Starts listening; returns when the port is bound. */
  public SluiceServer start() {
    server.start().join();
    LOG.info("listening on {} (HTTP and gRPC)", server.activeLocalPort());
    return this;
  }

  /** The port in use (useful when the builder asked for port 0). */
  public int port() {
    return server.activeLocalPort();
  }

  @Override
  public void close() {
    LOG.info("shutting down: draining requests in flight");
    server.stop().join();
    config.close();
    LOG.info("stopped");
  }

  /** Builds a {@link SluiceServer}. */
  public static final class Builder {
    private RateLimiter limiter;
    private ConfigReloader config;
    private PrometheusMeterRegistry prometheus;
    private String host = "0.0.0.0";
    private int port = 8080;
    private int maxKeyBytes = Sluice.DEFAULT_MAX_KEY_BYTES;
    private long maxBodyBytes = 64 * 1024;
    private String adminToken;
    private StoreHealth storeHealth;
    private Duration drainQuietPeriod = Duration.ofMillis(500);
    private Duration drainTimeout = Duration.ofSeconds(15);

    private Builder() {}

    public Builder limiter(RateLimiter l) {
      this.limiter = Objects.requireNonNull(l, "limiter");
      return this;
    }

    /** The configuration in force; {@code /v1/rules} reports it and the Envoy service matches against it. */
    public Builder config(ConfigReloader c) {
      this.config = Objects.requireNonNull(c, "config");
      return this;
    }

    /** The registry {@code /metrics} scrapes. */
    public Builder prometheus(PrometheusMeterRegistry r) {
      this.prometheus = Objects.requireNonNull(r, "prometheus");
      return this;
    }

    public Builder host(String h) {
      this.host = Objects.requireNonNull(h, "host");
      return this;
    }

    /** @throws IllegalArgumentException unless 0 ≤ port ≤ 65535 (0: any free port) */
    public Builder port(int p) {
      if (p < 0 || p > 65535) {
        throw new IllegalArgumentException("port must be between 0 and 65535, was " + p);
      }
      this.port = p;
      return this;
    }

    /** The limiter's key limit in UTF-8 bytes, so that the API can name it in errors. */
    public Builder maxKeyBytes(int n) {
      this.maxKeyBytes = n;
      return this;
    }

    /** @throws IllegalArgumentException unless ≥ 1 */
    public Builder maxBodyBytes(long n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxBodyBytes must be >= 1, was " + n);
      }
      this.maxBodyBytes = n;
      return this;
    }

    /** If set, {@code POST /v1/reset} requires {@code Authorization: Bearer <token>}. */
    public Builder adminToken(String t) {
      this.adminToken = t;
      return this;
    }

    /** The outcomes of the limiter's store calls (a listener of the limiter), for {@code /readyz}. */
    public Builder storeHealth(StoreHealth h) {
      this.storeHealth = h;
      return this;
    }

    /**
     * How shutdown drains: it waits until no request has been in flight for {@code quietPeriod},
     * and at most {@code timeout}.
     */
    public Builder drain(Duration quietPeriod, Duration timeout) {
      this.drainQuietPeriod = Objects.requireNonNull(quietPeriod, "quietPeriod");
      this.drainTimeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    /** @throws IllegalStateException if the limiter, config or registry is missing */
    public SluiceServer build() {
      if (limiter == null || config == null || prometheus == null) {
        throw new IllegalStateException("a server needs a limiter, a config and a Prometheus registry");
      }
      return new SluiceServer(this);
    }
  }
}
