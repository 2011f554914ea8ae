package dev.sluice.server.rlqs;

import dev.sluice.Ticker;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.spi.Grants;
import dev.sluice.spi.LeaseBoard;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Envoy's Rate Limit Quota Service ({@code StreamRateLimitQuotas}) on Sluice's store: each bucket
 * of each stream is a consumer of the leased rule and key its domain's {@code rlqs:} mapping
 * names; its token-bucket assignments are covered by units taken from the key's exact state before
 * they are sent (docs/scaling.md, §5). A sweep every 100 ms stops extending silent buckets,
 * abandons long-silent ones and those a reload unmapped.
 */
public final class RateLimitQuotaService extends RateLimitQuotaServiceGrpc.RateLimitQuotaServiceImplBase
    implements AutoCloseable {
  /**
   * Streams open at once. A stream lasts as long as its proxy: streams are not counted among the
   * requests in flight (a fleet of proxies would hold them all) but here; one more is refused
   * {@code RESOURCE_EXHAUSTED}, and its proxy retries, as Envoy does, or reaches another instance.
   */
  public static final int MAX_STREAMS = 1024;
  /** The gRPC method's path: its streams are exempt from the bound on requests in flight. */
  public static final String PATH = "/" + RateLimitQuotaServiceGrpc.SERVICE_NAME + "/StreamRateLimitQuotas";
  /** Buckets held over every stream; later ones get their domain's {@code unmatched} rule. */
  public static final int MAX_CONSUMERS = 100_000;
  /**
   * Bytes the buckets held over every stream may take, each counted as its {@code BucketId}'s
   * encoded size plus {@link #CONSUMER_OVERHEAD_BYTES}: 64 MiB. A bucket past it gets the
   * {@code unmatched} rule, as one past {@link #MAX_CONSUMERS}.
   */
  public static final long MAX_CONSUMER_BYTES = 64L * 1024 * 1024;
  /** What a held bucket costs besides its {@code BucketId}: its state, map entries, its demand. */
  static final int CONSUMER_OVERHEAD_BYTES = 512;
  /** How often streams are checked for silence, abandonment and reloads. */
  static final long SWEEP_MILLIS = 100;
  /**
   * Workers that answer reports. Each waits for the store's takes in turn; streams share them,
   * one task of a stream at a time.
   */
  private static final int WORKERS = 4;

  private final RlqsContext ctx;
  private final Set<RlqsStream> streams = ConcurrentHashMap.newKeySet();
  private final AtomicInteger consumers = new AtomicInteger();
  private final AtomicLong consumerBytes = new AtomicLong();
  private final AtomicLong ids = new AtomicLong();
  private final ExecutorService workers;
  private final ScheduledExecutorService sweeper;
  /** Null without a lease board. */
  private final FleetConsumerRates fleet;

  /**
   * @param config the configuration in force, read at each report and sweep
   * @param grants the grants of the store the limiter uses
   * @param ticker the clock of TTLs, report spacing and silence
   * @param registry where {@code sluice_rlqs_unmatched_total} is counted
   */
  public RateLimitQuotaService(Supplier<ServiceConfig> config, Grants grants, Ticker ticker, MeterRegistry registry) {
    this(config, grants, null, ticker, registry);
  }

  /**
   * @param board the store's lease board, null if it has none: with it, rates are shared across
   *     the fleet through leased mode's leader ({@link FleetConsumerRates}), without it among this
   *     service's streams alone
   */
  public RateLimitQuotaService(Supplier<ServiceConfig> config, Grants grants, LeaseBoard board, Ticker ticker,
      MeterRegistry registry) {
    Counter unmatched = Counter.builder("sluice.rlqs.unmatched")
        .description("RLQS buckets answered with their domain's unmatched rule (no mapping, or over the bounds)")
        .register(registry);
    this.fleet = board == null ? null : new FleetConsumerRates(board, config);
    this.ctx = new RlqsContext(Objects.requireNonNull(config, "config"), Objects.requireNonNull(grants, "grants"),
        fleet != null ? fleet : new LocalConsumerRates(), Objects.requireNonNull(ticker, "ticker"), unmatched);
    this.workers = Executors.newFixedThreadPool(WORKERS, daemon("sluice-rlqs"));
    this.sweeper = Executors.newSingleThreadScheduledExecutor(daemon("sluice-rlqs-sweep"));
    sweeper.scheduleWithFixedDelay(() -> {
      streams.forEach(RlqsStream::sweep);
      if (fleet != null) {
        try {
          fleet.tick(ticker.nowMicros() / 1000);
        } catch (RuntimeException e) {
          // A report that could not be made: the shares stay as they were until the next.
        }
      }
    }, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
  }

  @Override
  public StreamObserver<RateLimitQuotaUsageReports> streamRateLimitQuotas(
      StreamObserver<RateLimitQuotaResponse> responses) {
    RlqsStream s = new RlqsStream(this, ctx, responses, workers);
    synchronized (streams) {
      if (streams.size() >= MAX_STREAMS) {
        responses.onError(io.grpc.Status.RESOURCE_EXHAUSTED.withDescription("the service holds its most quota "
            + "streams at once (" + MAX_STREAMS + "); try again").asRuntimeException());
        return new StreamObserver<>() {
          @Override
          public void onNext(RateLimitQuotaUsageReports r) {}

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        };
      }
      streams.add(s);
    }
    return s.inbound();
  }

  /**
   * Counts one more consumer of {@code bytes} held, unless that would pass {@link #MAX_CONSUMERS}
   * or {@link #MAX_CONSUMER_BYTES}.
   */
  boolean reserveConsumer(long bytes) {
    if (consumers.incrementAndGet() > MAX_CONSUMERS) {
      consumers.decrementAndGet();
      return false;
    }
    if (consumerBytes.addAndGet(bytes) > MAX_CONSUMER_BYTES) {
      consumerBytes.addAndGet(-bytes);
      consumers.decrementAndGet();
      return false;
    }
    return true;
  }

  void releaseConsumer(long bytes) {
    consumers.decrementAndGet();
    consumerBytes.addAndGet(-bytes);
  }

  long nextConsumerId() {
    return ids.incrementAndGet();
  }

  void ended(RlqsStream s) {
    streams.remove(s);
  }

  /** Ends every stream (UNAVAILABLE) and stops the sweep and the workers. */
  @Override
  public void close() {
    sweeper.shutdownNow();
    if (fleet != null) {
      fleet.close();
    }
    streams.forEach(RlqsStream::shutdown);
    workers.shutdown();
    try {
      workers.awaitTermination(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdownNow();
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
