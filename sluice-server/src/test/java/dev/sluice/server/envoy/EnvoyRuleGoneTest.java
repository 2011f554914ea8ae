package dev.sluice.server.envoy;

import static dev.sluice.server.envoy.EnvoyHarness.d;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Sluice;
import dev.sluice.server.config.ConfigFiles;
import dev.sluice.server.config.ServiceConfig;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A reload can remove a rule between matching a request and deciding it: the service matches the
 * request again on the new configuration. It knows that case by the limiter's exception type,
 * {@link dev.sluice.UnknownRuleException}, and by nothing else.
 */
class EnvoyRuleGoneTest {
  private static final String LIMITED = """
      domain: d
      descriptors:
        - key: user
          rate_limit: {unit: minute, requests_per_unit: 2}
      """;

  private static ServiceConfig load(String yaml) throws Exception {
    return ConfigFiles.load(Map.of(Path.of("test.yaml"), yaml));
  }

  private static RateLimitRequest request() {
    return RateLimitRequest.newBuilder().setDomain("d").addDescriptors(d("user", "42")).build();
  }

  @Test
  void aRuleRemovedBetweenMatchingAndDecidingIsMatchedAgainOnTheNewConfiguration() throws Exception {
    ServiceConfig before = load(LIMITED);
    ServiceConfig after = load("domain: d\n");
    AtomicInteger lookups = new AtomicInteger();
    try (RateLimiter limiter = Sluice.builder().rules(after.rules()).build()) {
      // The first match sees the old domains; the limiter already has the new rules.
      EnvoyRateLimitService service = new EnvoyRateLimitService(limiter,
          () -> lookups.getAndIncrement() == 0 ? before.domains() : after.domains(), EnvoyOptions.DEFAULT, Clock.systemUTC());
      Answer a = Answer.of(service, request());
      assertThat(a.error.get()).isNull();
      assertThat(a.response.get().getOverallCode()).isEqualTo(RateLimitResponse.Code.OK);
      assertThat(lookups).hasValue(2);
    }
  }

  @Test
  void aMessageThatReadsLikeAnUnknownRuleIsNotMatchedAgain() throws Exception {
    ServiceConfig config = load(LIMITED);
    List<Request> decided = new CopyOnWriteArrayList<>();
    try (RateLimiter real = Sluice.builder().rules(config.rules()).build()) {
      // A refusal of another kind whose words happen to begin like the limiter's.
      RateLimiter limiter = refusing(real, decided, new IllegalArgumentException("unknown rule set in the store"));
      EnvoyRateLimitService service = new EnvoyRateLimitService(limiter, config::domains, EnvoyOptions.DEFAULT, Clock.systemUTC());
      Answer a = Answer.of(service, request());
      assertThat(Status.fromThrowable(a.error.get()).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(decided).hasSize(1);
    }
  }

  /** {@code real}, except that every acquireAsync fails with {@code error}. */
  private static RateLimiter refusing(RateLimiter real, List<Request> decided, RuntimeException error) {
    return (RateLimiter) Proxy.newProxyInstance(RateLimiter.class.getClassLoader(), new Class<?>[] {RateLimiter.class},
        (proxy, method, args) -> {
          if (method.getName().equals("acquireAsync")) {
            decided.add((Request) args[0]);
            return CompletableFuture.failedFuture(error);
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private static final class Answer implements StreamObserver<RateLimitResponse> {
    final AtomicReference<RateLimitResponse> response = new AtomicReference<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();

    static Answer of(EnvoyRateLimitService service, RateLimitRequest request) {
      Answer a = new Answer();
      service.shouldRateLimit(request, a);
      return a;
    }

    @Override
    public void onNext(RateLimitResponse value) {
      response.set(value);
    }

    @Override
    public void onError(Throwable t) {
      error.set(t);
    }

    @Override
    public void onCompleted() {}
  }
}
