package dev.sluice.server;

import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.DecoratingHttpServiceFunction;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.server.rlqs.RateLimitQuotaService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The most requests the service holds at once, over every connection and protocol. A request
 * counts from when it reaches the service (its body read) until its answer is written or
 * abandoned; past the bound it is answered at once, without being decided: HTTP 503 with the
 * API's JSON error, gRPC {@code RESOURCE_EXHAUSTED}. The limiter's own bound on store calls
 * ({@code Sluice.Builder#maxInFlight}) keeps a slow store from piling up calls; this one keeps
 * the front end — contexts, bodies, answers waiting for a slow reader — from piling up requests.
 *
 * <p>Probes and scrapes are neither counted nor refused: an instance that is busy says so by its
 * 503s, not by failing its liveness check. Nor are Envoy's quota streams
 * ({@code StreamRateLimitQuotas}), which last as long as their proxy: the quota service bounds
 * them itself ({@link RateLimitQuotaService#MAX_STREAMS}).
 */
final class InFlightBound implements DecoratingHttpServiceFunction {
  /** Requests held at once when not told otherwise, on a heap of 512 MiB or more. */
  static final int DEFAULT_MAX = 1024;
  private static final Set<String> NEVER_REFUSED = Set.of("/healthz", "/readyz", "/metrics",
      RateLimitQuotaService.PATH);
  private static final String GRPC_STATUS_RESOURCE_EXHAUSTED = "8";

  private final int max;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Counter refused;

  InFlightBound(int max, MeterRegistry registry) {
    if (max < 1) {
      throw new IllegalArgumentException("maxInFlight must be >= 1, was " + max);
    }
    this.max = max;
    this.refused = Counter.builder("sluice_requests_over_capacity")
        .description("requests answered 503 / RESOURCE_EXHAUSTED because the service held its most requests at once")
        .register(registry);
    Gauge.builder("sluice_requests_in_flight", inFlight, AtomicInteger::get)
        .description("requests the service holds now (read, not yet answered)").register(registry);
    Gauge.builder("sluice_requests_max_in_flight", () -> max)
        .description("the most requests the service holds at once (--max-in-flight)").register(registry);
  }

  /**
   * The default bound for a heap of {@code maxHeapBytes} and bodies of at most {@code maxBodyBytes}:
   * {@link #DEFAULT_MAX}, or fewer, so that the bodies of the requests held take at most an
   * eighth of the heap (384 with {@code -Xmx192m} and 64 KiB bodies), and at least 16.
   */
  static int defaultMax(long maxHeapBytes, long maxBodyBytes) {
    long byHeap = maxHeapBytes / 8 / Math.max(1, maxBodyBytes);
    return (int) Math.max(16, Math.min(DEFAULT_MAX, byHeap));
  }

  int max() {
    return max;
  }

  @Override
  public HttpResponse serve(HttpService delegate, ServiceRequestContext ctx, HttpRequest req) throws Exception {
    if (NEVER_REFUSED.contains(ctx.path())) {
      return delegate.serve(ctx, req);
    }
    if (inFlight.incrementAndGet() > max) {
      inFlight.decrementAndGet();
      refused.increment();
      return overCapacity(ctx);
    }
    // The log completes once the answer is written, or the stream is reset or closed.
    ctx.log().whenComplete().thenRun(inFlight::decrementAndGet);
    return delegate.serve(ctx, req);
  }

  private HttpResponse overCapacity(ServiceRequestContext ctx) {
    String message = "the service holds its most requests at once (" + max + "); try again";
    String contentType = ctx.request().headers().get(HttpHeaderNames.CONTENT_TYPE);
    if (contentType != null && contentType.startsWith("application/grpc")) {
      // A trailers-only gRPC answer; Envoy's client reads RESOURCE_EXHAUSTED as a failed call and
      // applies its failure_mode_deny setting.
      return HttpResponse.of(ResponseHeaders.builder(HttpStatus.OK)
          .contentType(MediaType.parse(contentType.startsWith("application/grpc+proto")
              ? "application/grpc+proto" : "application/grpc"))
          .add("grpc-status", GRPC_STATUS_RESOURCE_EXHAUSTED)
          .add("grpc-message", message)
          .build());
    }
    return HttpResponse.of(ResponseHeaders.builder(HttpStatus.SERVICE_UNAVAILABLE).contentType(MediaType.JSON_UTF_8)
            .add(HttpHeaderNames.RETRY_AFTER, "1").build(),
        HttpData.ofUtf8("{\"error\":{\"code\":\"over_capacity\",\"message\":\"" + message + "\"}}"));
  }
}
