package dev.sluice.server.rlqs;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One Envoy proxy's {@code StreamRateLimitQuotas} stream, driven by a test through the generated
 * async stub: reports go out, the service's responses queue up, the stream's end is kept.
 */
final class ProxyStream implements AutoCloseable {
  private final BlockingQueue<RateLimitQuotaResponse> responses = new LinkedBlockingQueue<>();
  private final CompletableFuture<Status> ended = new CompletableFuture<>();
  private final StreamObserver<RateLimitQuotaUsageReports> requests;
  private final String domain;

  ProxyStream(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub stub, String domain) {
    this.domain = domain;
    this.requests = stub.streamRateLimitQuotas(new StreamObserver<>() {
      @Override
      public void onNext(RateLimitQuotaResponse r) {
        responses.add(r);
      }

      @Override
      public void onError(Throwable t) {
        ended.complete(Status.fromThrowable(t));
      }

      @Override
      public void onCompleted() {
        ended.complete(Status.OK);
      }
    });
  }

  static BucketId bucket(String... kv) {
    BucketId.Builder b = BucketId.newBuilder();
    for (int i = 0; i < kv.length; i += 2) {
      b.putBucket(kv[i], kv[i + 1]);
    }
    return b.build();
  }

  static BucketQuotaUsage usage(BucketId id, long allowed, long denied, long elapsedMillis) {
    return BucketQuotaUsage.newBuilder().setBucketId(id).setNumRequestsAllowed(allowed).setNumRequestsDenied(denied)
        .setTimeElapsed(Duration.newBuilder().setSeconds(elapsedMillis / 1000)
            .setNanos((int) (elapsedMillis % 1000) * 1_000_000)).build();
  }

  void send(RateLimitQuotaUsageReports r) {
    requests.onNext(r);
  }

  /** Reports {@code usages} in this stream's domain. */
  void report(BucketQuotaUsage... usages) {
    RateLimitQuotaUsageReports.Builder b = RateLimitQuotaUsageReports.newBuilder().setDomain(domain);
    for (BucketQuotaUsage u : usages) {
      b.addBucketQuotaUsages(u);
    }
    send(b.build());
  }

  /** Reports and waits for the answer. */
  RateLimitQuotaResponse exchange(BucketQuotaUsage... usages) throws InterruptedException {
    report(usages);
    return next();
  }

  /** The next response, waiting up to 30 s for it (a bound on a busy machine, not a timing). */
  RateLimitQuotaResponse next() throws InterruptedException {
    RateLimitQuotaResponse r = responses.poll(30, TimeUnit.SECONDS);
    if (r == null) {
      throw new AssertionError("no response within 30 s" + (ended.isDone() ? "; the stream ended: " + ended.join()
          : ""));
    }
    return r;
  }

  /** A response already received, or null. */
  RateLimitQuotaResponse poll() {
    return responses.poll();
  }

  /** How the service ended the stream, waiting up to 30 s. */
  Status end() throws Exception {
    return ended.get(30, TimeUnit.SECONDS);
  }

  boolean isEnded() {
    return ended.isDone();
  }

  /** Ends the stream from the proxy's side, as a proxy does when it goes away. */
  @Override
  public void close() {
    if (!ended.isDone()) {
      try {
        requests.onCompleted();
      } catch (RuntimeException e) {
        // Already closed by the service.
      }
    }
  }

  static Map<String, String> map(BucketId id) {
    return id.getBucketMap();
  }
}
