package dev.sluice.server;

import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.SessionProtocol;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.grpc.GrpcService;
import com.linecorp.armeria.server.grpc.GrpcServiceBuilder;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.spi.Store;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.envoy.EnvoyRateLimitService;
import dev.sluice.server.envoy.GrpcErrors;
import dev.sluice.server.http.AdminGuard;
import dev.sluice.server.http.DashboardApi;
import dev.sluice.server.metrics.DecisionRates;
import dev.sluice.server.http.HttpApi;
import dev.sluice.server.rlqs.RateLimitQuotaService;
import dev.sluice.spi.Grants;
import dev.sluice.spi.Store;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Sluice service: the HTTP JSON API, Envoy's gRPC rate limit service and, given a store that
 * hands out grants, Envoy's Rate Limit Quota Service, on one port. The limiter and the store belong
 * to the caller.
 *
 * <p>Closing it shuts down in three steps, so that a client that honours readiness and
 * {@code Connection: close} sees no failed request:
 * <ol>
 *   <li>At once, {@code /readyz} answers 503 and every answer closes its connection
 *       ({@code Connection: close} in HTTP/1.1, GOAWAY in HTTP/2); everything is still served for
 *       the shutdown grace, so that balancers notice and route elsewhere.
 *   <li>After the grace, no new connection is taken; requests in flight finish.
 *   <li>As soon as none is in flight (at most the drain timeout), the remaining connections and
 *       the port are closed, then the reloader is stopped.
 * </ol>
 */
public final class SluiceServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceServer.class);
  /**
   * Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). A client
   * keeps each stream open for a decision's round trip: 256 lets one connection carry about 256,000
   * decisions a second at 1 ms each, more than an instance answers, while a single connection can
   * no longer open tens of thousands of streams at once (each holds a request's context and
   * buffers). Envoy opens another connection when a server's limit is reached.
   */
  public static final int MAX_STREAMS_PER_CONNECTION = 256;
  /** Connections held at once, when not told otherwise. */
  public static final int DEFAULT_MAX_CONNECTIONS = 4096;
  /**
   * The largest gRPC message read (Envoy's requests are a few hundred bytes; 100 descriptors, the
   * most a request may have, of long values fit): past it, {@code RESOURCE_EXHAUSTED}.
   */
  static final int MAX_GRPC_MESSAGE_BYTES = 1024 * 1024;
  /**
   * The largest request of a route without a bound of its own, the gRPC service's included: above
   * its message bound, so that the message bound is the one that answers.
   */
  static final long MAX_OTHER_REQUEST_BYTES = MAX_GRPC_MESSAGE_BYTES + 64 * 1024;

  private final Server server;
  private final ConfigReloader config;
  private final Duration shutdownGrace;
  private final Duration drainTimeout;
  private final AdminGuard admin;
  private final String bound;
  // Written once each by close(), read on the event loops.
  private volatile boolean draining;
  private volatile boolean refusingConnections;
  private volatile boolean closed;
  private final OpenConnections connections = new OpenConnections();
  private final InFlightBound inFlight;
  /** Envoy's Rate Limit Quota Service; null without a store that hands out grants. */
  private final RateLimitQuotaService rlqs;

  private SluiceServer(Builder b) {
    ServerBuilder sb = Server.builder();
    InetSocketAddress address = new InetSocketAddress(b.host, b.port);
    sb.port(address, SessionProtocol.HTTP);
    // No quiet period: Armeria keeps its port open and serving until nothing has been answered
    // for that long, so a steady client would keep the process up until the timeout. The grace
    // before stop() is the time to notice; stop() ends as soon as nothing is in flight.
    sb.gracefulShutdownTimeout(Duration.ZERO, b.drainTimeout);
    // Armeria's defaults leave streams per connection and connections unbounded.
    sb.http2MaxStreamsPerConnection(MAX_STREAMS_PER_CONNECTION);
    sb.maxNumConnections(b.maxConnections);
    sb.maxRequestLength(MAX_OTHER_REQUEST_BYTES);
    int maxInFlight = b.maxInFlight > 0 ? b.maxInFlight
        : InFlightBound.defaultMax(Runtime.getRuntime().maxMemory(), b.maxBodyBytes);
    this.inFlight = new InFlightBound(maxInFlight, b.prometheus);
    sb.childChannelPipelineCustomizer(p -> {
      if (refusingConnections) {
        // The port stays open until the requests in flight are answered; a connection accepted
        // meanwhile is closed at once rather than served.
        p.channel().close();
        return;
      }
      p.addFirst(new PathEscapes());
      p.addFirst(FatalErrors.channelHandler());
      connections.add(p.channel());
    });
    sb.decorator(inFlight);
    sb.decorator((delegate, ctx, req) -> {
      if (draining) {
        // Connection: close on HTTP/1.1, closed after this answer; on HTTP/2 a GOAWAY, and streams
        // already open finish: the client's next request opens a new connection, which a balancer
        // sends to an instance that is not shutting down.
        ctx.addAdditionalResponseHeader(HttpHeaderNames.CONNECTION, "close");
        if (!ctx.sessionProtocol().isMultiplex()) {
          // Armeria leaves an HTTP/1.1 connection open after its "close" answer, until the client
          // closes it; the server must close it (RFC 9112, 9.6).
          ctx.log().whenComplete().thenRun(() -> connections.close(ctx.remoteAddress()));
        }
      }
      try {
        return delegate.serve(ctx, req);
      } catch (VirtualMachineError e) {
        FatalErrors.check(e);
        throw e;
      }
    });
    // A quota stream lasts as long as its proxy and carries a report per reporting interval: the
    // request timeout and the bound on a request's bytes would end it. Each of its messages is
    // still bounded (MAX_GRPC_MESSAGE_BYTES), and the quota service bounds its streams.
    sb.decorator(RateLimitQuotaService.PATH, (delegate, ctx, req) -> {
      ctx.clearRequestTimeout();
      ctx.setMaxRequestLength(0);
      return delegate.serve(ctx, req);
    });
    // Readiness fails as soon as shutdown begins, whatever the store says.
    sb.decorator("/readyz", (delegate, ctx, req) -> draining
        ? HttpResponse.of(HttpStatus.SERVICE_UNAVAILABLE, MediaType.JSON_UTF_8, "{\"status\":\"shutting down\"}")
        : delegate.serve(ctx, req));
    // Every handler runs on the event loop and never blocks (a remote store answers on its own
    // client's threads). Armeria's shared loops, two per CPU, are kept: one per CPU costs about 5%
    // less CPU per decision but, sharing the CPUs with other processes, it answered fewer
    // decisions per second (docs/service.md, "Performance notes").
    // The Server header tells anyone which HTTP library and version answer.
    sb.disableServerHeader();
    this.admin = AdminGuard.of(b.adminToken, address.getAddress());
    this.bound = address.getAddress().getHostAddress();
    new HttpApi(b.limiter, b.config, b.prometheus, b.maxBodyBytes, admin, b.storeHealth,
        b.store == null ? Optional.empty() : b.store.leaseBoard(), b.trustRequestTime).bind(sb);
    // Without the limiter's decision counts (a server wired by hand), the page shows the rest.
    new DashboardApi(b.limiter, b.config, b.rates == null ? new DecisionRates(Ticker.system()) : b.rates,
        b.storeHealth, b.prometheus, admin, b.store == null ? Optional.empty() : b.store.leaseBoard()).bind(sb);
    Grants grants = b.store == null ? null : b.store.grants().orElse(null);
    this.rlqs = grants == null ? null
        : new RateLimitQuotaService(b.config::current, grants, b.store.leaseBoard().orElse(null), b.ticker,
            b.prometheus);
    // Reflection lets grpcurl and similar tools call the service without its .proto files.
    GrpcServiceBuilder grpc = GrpcService.builder()
        .exceptionHandler(new GrpcErrors())
        .maxRequestMessageLength(MAX_GRPC_MESSAGE_BYTES)
        .addService(new EnvoyRateLimitService(b.limiter, () -> b.config.current().domains(), b.envoy))
        .addService(ProtoReflectionServiceV1.newInstance());
    if (rlqs != null) {
      grpc.addService(rlqs);
    }
    sb.service(grpc.build());
    this.server = sb.build();
    this.config = b.config;
    this.shutdownGrace = b.shutdownGrace;
    this.drainTimeout = b.drainTimeout;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Starts listening; returns when the port is bound. */
  public SluiceServer start() {
    server.start().join();
    FatalErrors.watch(server.config().workerGroup(), () -> closed);
    LOG.info("listening on {}:{} (HTTP and gRPC; at most {} requests in flight, {} connections, {} streams each)",
        bound, port(), inFlight.max(), server.config().maxNumConnections(), MAX_STREAMS_PER_CONNECTION);
    if (admin.refusesAll()) {
      LOG.warn(admin.warning());
    }
    return this;
  }

  /** The port in use (useful when the builder asked for port 0). */
  public int port() {
    // activeLocalPort() knows only loopback and wildcard addresses, not 10.1.2.3.
    return server.activePort().localAddress().getPort();
  }

  /** Shuts down as the class comment says; returns once stopped. Closing twice does nothing. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    draining = true;
    if (!shutdownGrace.isZero()) {
      LOG.info("shutting down: /readyz answers 503; serving {} ms more so that balancers notice",
          shutdownGrace.toMillis());
      sleep(shutdownGrace);
    }
    LOG.info("shutting down: no new connections; draining requests in flight (at most {} ms)", drainTimeout.toMillis());
    refusingConnections = true;
    if (rlqs != null) {
      // Its streams never end by themselves: ended here, Envoy reconnects to another instance.
      rlqs.close();
    }
    CompletableFuture<Void> stopped = server.stop();
    awaitDrained(stopped);
    config.close();
    LOG.info("stopped");
  }

  /**
   * Waits until the port and every connection are closed, which Armeria does once nothing is in
   * flight. Its stop() goes on to let its acceptor threads idle out for a few seconds more; the
   * process need not wait for that.
   */
  private void awaitDrained(CompletableFuture<Void> stopped) {
    long deadline = System.nanoTime() + drainTimeout.plusSeconds(5).toNanos();
    while (!stopped.isDone() && System.nanoTime() < deadline
        && !(server.activePorts().isEmpty() && server.numConnections() == 0)) {
      sleep(Duration.ofMillis(10));
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      // Asked to hurry: go on with the next step.
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The open connections by their client's address: a request's context names its connection
   * only by addresses, and an answer saying {@code Connection: close} must be followed by closing.
   */
  private static final class OpenConnections {
    private final ConcurrentMap<SocketAddress, Channel> byPeer = new ConcurrentHashMap<>();

    void add(Channel ch) {
      SocketAddress peer = ch.remoteAddress();
      if (peer != null) {
        byPeer.put(peer, ch);
        ch.closeFuture().addListener(f -> byPeer.remove(peer, ch));
      }
    }

    /** Closes the connection from {@code peer}, after what its event loop has queued (the answer). */
    void close(SocketAddress peer) {
      Channel ch = byPeer.get(peer);
      if (ch != null) {
        ch.eventLoop().execute(ch::close);
      }
    }
  }

  /** Builds a {@link SluiceServer}. */
  public static final class Builder {
    private RateLimiter limiter;
    private ConfigReloader config;
    private PrometheusMeterRegistry prometheus;
    private String host = "127.0.0.1";
    private int port = 8080;
    private long maxBodyBytes = 64 * 1024;
    private String adminToken;
    private StoreHealth storeHealth;
    private DecisionRates rates;
    private Store store;
    private Duration shutdownGrace = Duration.ZERO;
    private Duration drainTimeout = Duration.ofSeconds(15);
    private int maxInFlight;
    private int maxConnections = DEFAULT_MAX_CONNECTIONS;
    private boolean trustRequestTime;

    private EnvoyOptions envoy = EnvoyOptions.DEFAULT;
    private Ticker ticker = Ticker.system();

    private Builder() {}

    /** The clock of the Rate Limit Quota Service's TTLs and silences (default: the system's). */
    public Builder ticker(Ticker t) {
      this.ticker = Objects.requireNonNull(t, "ticker");
      return this;
    }

    /** How the Envoy service answers (default: as Envoy's service does with its settings unset). */
    public Builder envoy(EnvoyOptions o) {
      this.envoy = Objects.requireNonNull(o, "envoy");
      return this;
    }

    /**
     * The most requests held at once ({@link InFlightBound}); 0 (the default) for 1024, or fewer
     * on a small heap ({@link InFlightBound#defaultMax}).
     *
     * @throws IllegalArgumentException if negative
     */
    public Builder maxInFlight(int n) {
      if (n < 0) {
        throw new IllegalArgumentException("maxInFlight must be >= 1 (or 0 for the default), was " + n);
      }
      this.maxInFlight = n;
      return this;
    }

    /**
     * The most connections held at once (default {@value #DEFAULT_MAX_CONNECTIONS}); one more is
     * closed as soon as it is accepted.
     *
     * @throws IllegalArgumentException unless >= 1
     */
    public Builder maxConnections(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxConnections must be >= 1, was " + n);
      }
      this.maxConnections = n;
      return this;
    }

    /**
     * Whether {@code POST /v1/acquire} decides a body's {@code "atMicros"} at that time (default
     * no: the field is refused). A caller that picks its own time can move its keys' windows
     * forward and be admitted again at once: only for replay and tests, never facing clients.
     */
    public Builder trustRequestTime(boolean trust) {
      this.trustRequestTime = trust;
      return this;
    }

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

    /** The address to bind (default {@code 127.0.0.1}). */
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

    /** @throws IllegalArgumentException unless ≥ 1 */
    public Builder maxBodyBytes(long n) {
      if (n < 1) {
        throw new IllegalArgumentException("maxBodyBytes must be >= 1, was " + n);
      }
      this.maxBodyBytes = n;
      return this;
    }

    /**
     * If set, admin endpoints ({@code POST /v1/reset}) require {@code Authorization: Bearer <token>};
     * if not, they are open on a loopback address and refused (403) on any other.
     */
    public Builder adminToken(String t) {
      this.adminToken = t;
      return this;
    }

    /** The outcomes of the limiter's store calls (a listener of the limiter), for {@code /readyz}. */
    public Builder storeHealth(StoreHealth h) {
      this.storeHealth = h;
      return this;
    }

    /** The limiter's decisions per rule over the last minutes (a listener of it), for the dashboard. */
    public Builder decisionRates(DecisionRates r) {
      this.rates = Objects.requireNonNull(r, "rates");
      return this;
    }

    /**
     * The store the limiter decides on: {@code GET /v1/leases} reads its lease board (without it,
     * the default, that endpoint answers 501), and if it hands out grants ({@link Store#grants()})
     * the server also answers Envoy's Rate Limit Quota Service, covering its assignments with units
     * taken from it.
     */
    public Builder store(Store s) {
      this.store = Objects.requireNonNull(s, "store");
      return this;
    }

    /**
     * How long {@link SluiceServer#close()} keeps serving, with {@code /readyz} failing, before it
     * refuses new connections (default none).
     *
     * @throws IllegalArgumentException if negative
     */
    public Builder shutdownGrace(Duration grace) {
      if (grace.isNegative()) {
        throw new IllegalArgumentException("shutdownGrace must not be negative, was " + grace);
      }
      this.shutdownGrace = grace;
      return this;
    }

    /**
     * How long shutdown waits, after the grace, for requests in flight (default 15 s).
     *
     * @throws IllegalArgumentException if negative
     */
    public Builder drainTimeout(Duration timeout) {
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("drainTimeout must not be negative, was " + timeout);
      }
      this.drainTimeout = timeout;
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
