package dev.sluice.server.rlqs;

import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.server.rlqs.ConsumerRates.Limit;
import dev.sluice.server.rlqs.RlqsDomain.Target;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction.AbandonAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction.QuotaAssignmentAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy;
import io.envoyproxy.envoy.type.v3.RateLimitStrategy.BlanketRule;
import io.envoyproxy.envoy.type.v3.TokenBucket;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code StreamRateLimitQuotas} stream: its domain, its buckets (each a {@link Consumer}, at
 * most {@link #MAX_BUCKETS}), and the serial order in which its reports and the sweep's checks
 * run. Everything runs on the service's workers, one task of a stream at a time, so a take that
 * waits for the store never holds an event loop. The client's next message is asked for only once
 * the last one is answered: a stream holds at most one report, and a proxy that sends faster is
 * held back by HTTP/2's flow control.
 */
final class RlqsStream {
  private static final Logger LOG = LoggerFactory.getLogger(RlqsStream.class);
  /** Buckets held per stream; later ones get the {@code unmatched} rule. */
  static final int MAX_BUCKETS = 1_000;
  /** The TTL of a blanket rule for an unmapped bucket. */
  static final long UNMATCHED_TTL_MICROS = 60_000_000;

  private final RateLimitQuotaService service;
  private final RlqsContext ctx;
  private final StreamObserver<RateLimitQuotaResponse> out;
  private final Executor workers;
  /** Whether a sweep is queued: a slow store must not pile them up. */
  private final AtomicBoolean sweepQueued = new AtomicBoolean();
  private final Map<Map<String, String>, Consumer> consumers = new HashMap<>();
  private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
  private String domain;
  private volatile boolean closed;

  RlqsStream(RateLimitQuotaService service, RlqsContext ctx, StreamObserver<RateLimitQuotaResponse> out,
      Executor workers) {
    this.service = service;
    this.ctx = ctx;
    this.out = out;
    this.workers = workers;
  }

  /** The observer gRPC hands the client's messages to, one at a time. */
  StreamObserver<RateLimitQuotaUsageReports> inbound() {
    ServerCallStreamObserver<RateLimitQuotaResponse> call = (ServerCallStreamObserver<RateLimitQuotaResponse>) out;
    call.disableAutoRequest();
    // A call the client broke off (a reset, a malformed frame) is cancelled: what the stream holds
    // is released in its turn, and a report already being answered writes to nothing instead of
    // failing as if the service had.
    call.setOnCancelHandler(() -> submit(RlqsStream.this::release));
    call.request(1);
    return new StreamObserver<>() {
      @Override
      public void onNext(RateLimitQuotaUsageReports r) {
        submit(() -> {
          handle(r);
          if (!closed) {
            call.request(1);
          }
        });
      }

      @Override
      public void onError(Throwable t) {
        submit(RlqsStream.this::release);
      }

      @Override
      public void onCompleted() {
        submit(() -> {
          if (!closed) {
            release();
            out.onCompleted();
          }
        });
      }
    };
  }

  /** Runs the silence, abandon and reload checks in the stream's turn. */
  void sweep() {
    if (sweepQueued.compareAndSet(false, true)) {
      submit(() -> {
        sweepQueued.set(false);
        check();
      });
    }
  }

  /** Ends the stream at shutdown: its consumers leave. */
  void shutdown() {
    submit(() -> {
      if (!closed) {
        release();
        out.onError(Status.UNAVAILABLE.withDescription("the service is shutting down").asRuntimeException());
      }
    });
  }

  private synchronized void submit(Runnable task) {
    tail = tail.thenRunAsync(() -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.warn("rlqs: a stream failed", e);
        try {
          fail(Status.INTERNAL, "the service failed to answer; the proxy may reconnect");
        } catch (RuntimeException closing) {
          // The call is gone already; what the stream held is released all the same.
          release();
        }
      }
    }, workers);
  }

  private void handle(RateLimitQuotaUsageReports r) {
    if (closed) {
      return;
    }
    String d = r.getDomain();
    if (domain == null) {
      if (d.isEmpty()) {
        fail(Status.INVALID_ARGUMENT, "the stream's first usage report needs a domain");
        return;
      }
      domain = d;
    } else if (!d.isEmpty() && !d.equals(domain)) {
      fail(Status.INVALID_ARGUMENT, "domain '" + Reports.clip(d) + "' is not the stream's, '" + Reports.clip(domain)
          + "'");
      return;
    }
    ServiceConfig config = ctx.config();
    RlqsDomain dom = config.rlqs().domain(domain);
    if (dom == null) {
      fail(Status.NOT_FOUND, "unknown rlqs domain '" + Reports.clip(domain) + "'");
      return;
    }
    String problem = Reports.problem(r);
    if (problem != null) {
      fail(Status.INVALID_ARGUMENT, problem);
      return;
    }
    long now = ctx.now();
    RateLimitQuotaResponse.Builder answer = RateLimitQuotaResponse.newBuilder();
    for (BucketQuotaUsage u : r.getBucketQuotaUsagesList()) {
      BucketAction a = answer(u, config, dom, now);
      if (a == null) {
        return;
      }
      answer.addBucketAction(a);
    }
    out.onNext(answer.build());
  }

  /** The action for one bucket's usage; null once the stream has been ended. */
  private BucketAction answer(BucketQuotaUsage u, ServiceConfig config, RlqsDomain dom, long now) {
    Map<String, String> bucket = u.getBucketId().getBucketMap();
    Consumer c = consumers.get(bucket);
    Target t = dom.resolve(bucket);
    Rule rule = t == null ? null : config.rules().get(t.rule());
    if (rule == null || rule.lease() == null) {
      if (c != null) {
        forget(c);
      }
      return unmatched(u.getBucketId(), dom);
    }
    int keyBytes = t.key().getBytes(StandardCharsets.UTF_8).length;
    if (keyBytes > Sluice.DEFAULT_MAX_KEY_BYTES) {
      fail(Status.INVALID_ARGUMENT, "the key made for bucket " + Reports.clip(bucket.toString()) + " holds " + keyBytes
          + " bytes; a key may hold at most " + Sluice.DEFAULT_MAX_KEY_BYTES);
      return null;
    }
    Limit limit = new Limit(t.rule(), t.key());
    if (c != null && !c.limit.equals(limit)) {
      forget(c);
      c = null;
    }
    if (c == null) {
      long bytes = u.getBucketId().getSerializedSize() + RateLimitQuotaService.CONSUMER_OVERHEAD_BYTES;
      if (consumers.size() >= MAX_BUCKETS || !service.reserveConsumer(bytes)) {
        return unmatched(u.getBucketId(), dom);
      }
      c = new Consumer(service.nextConsumerId(), u.getBucketId(), limit, bytes);
      consumers.put(bucket, c);
      ctx.rates().join(limit, c.id);
    }
    return assignment(c.bucketId, c.report(u, rule, now, ctx));
  }

  private BucketAction unmatched(BucketId id, RlqsDomain dom) {
    ctx.countUnmatched();
    return BucketAction.newBuilder().setBucketId(id).setQuotaAssignmentAction(QuotaAssignmentAction.newBuilder()
        .setAssignmentTimeToLive(duration(UNMATCHED_TTL_MICROS))
        .setRateLimitStrategy(RateLimitStrategy.newBuilder()
            .setBlanketRule(dom.denyUnmatched() ? BlanketRule.DENY_ALL : BlanketRule.ALLOW_ALL))).build();
  }

  static BucketAction assignment(BucketId id, Assignment a) {
    RateLimitStrategy.Builder s = RateLimitStrategy.newBuilder();
    if (a.denyAll()) {
      s.setBlanketRule(BlanketRule.DENY_ALL);
    } else {
      s.setTokenBucket(TokenBucket.newBuilder().setMaxTokens((int) Math.min(Integer.MAX_VALUE, a.maxTokens()))
          .setTokensPerFill(UInt32Value.of((int) Math.min(Integer.MAX_VALUE, a.tokensPerFill())))
          .setFillInterval(duration(a.fillMicros())));
    }
    return BucketAction.newBuilder().setBucketId(id).setQuotaAssignmentAction(QuotaAssignmentAction.newBuilder()
        .setAssignmentTimeToLive(duration(a.ttlMicros())).setRateLimitStrategy(s)).build();
  }

  private static Duration duration(long micros) {
    return Duration.newBuilder().setSeconds(micros / 1_000_000).setNanos((int) (micros % 1_000_000) * 1000).build();
  }

  /**
   * Silence and abandonment ({@link Consumer#sweep}), and buckets whose domain, mapping or rule a
   * reload removed: each such bucket gets an {@code AbandonAction} and is forgotten.
   */
  private void check() {
    if (closed || consumers.isEmpty()) {
      return;
    }
    ServiceConfig config = ctx.config();
    RlqsDomain dom = domain == null ? null : config.rlqs().domain(domain);
    long now = ctx.now();
    RateLimitQuotaResponse.Builder abandon = RateLimitQuotaResponse.newBuilder();
    for (Iterator<Consumer> it = consumers.values().iterator(); it.hasNext(); ) {
      Consumer c = it.next();
      Target t = dom == null ? null : dom.resolve(c.bucketId.getBucketMap());
      Rule rule = t == null ? null : config.rules().get(t.rule());
      boolean gone = rule == null || rule.lease() == null || !c.limit.equals(new Limit(t.rule(), t.key()));
      if (gone || c.sweep(now, ctx)) {
        it.remove();
        leave(c);
        abandon.addBucketAction(BucketAction.newBuilder().setBucketId(c.bucketId)
            .setAbandonAction(AbandonAction.getDefaultInstance()));
      }
    }
    if (abandon.getBucketActionCount() > 0) {
      out.onNext(abandon.build());
    }
  }

  private void forget(Consumer c) {
    consumers.remove(c.bucketId.getBucketMap());
    leave(c);
  }

  private void leave(Consumer c) {
    ctx.rates().leave(c.limit, c.id);
    service.releaseConsumer(c.bytes);
  }

  /** The stream is over: its consumers leave; their units are not given back (Envoy may still use them). */
  private void release() {
    if (closed) {
      return;
    }
    closed = true;
    for (Consumer c : consumers.values()) {
      leave(c);
    }
    consumers.clear();
    service.ended(this);
  }

  private void fail(Status status, String message) {
    if (closed) {
      return;
    }
    release();
    out.onError(status.withDescription(message).asRuntimeException());
  }
}
