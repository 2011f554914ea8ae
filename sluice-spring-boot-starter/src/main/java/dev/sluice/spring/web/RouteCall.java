package dev.sluice.spring.web;

import dev.sluice.Decision;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import java.util.concurrent.CompletionStage;

/**
 * What a matched route decides for one request: its operation, or its Envoy descriptors. A null
 * decision lets the request through untouched (no descriptor met a limit). Either method may
 * throw, or complete with, an {@link IllegalArgumentException} for what the request carries (a
 * missing attribute, a value too long for a key): the filters answer it with a 400.
 */
interface RouteCall {
  Decision decide(RateLimiter limiter);

  CompletionStage<Decision> decideAsync(RateLimiter limiter);

  /** A route's operation, run with the attributes read from the request. */
  record Operation(OperationRequest request) implements RouteCall {
    @Override
    public Decision decide(RateLimiter limiter) {
      return limiter.acquire(request);
    }

    @Override
    public CompletionStage<Decision> decideAsync(RateLimiter limiter) {
      return limiter.acquireAsync(request);
    }
  }
}
