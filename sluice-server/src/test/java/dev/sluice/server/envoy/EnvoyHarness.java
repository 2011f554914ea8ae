package dev.sluice.server.envoy;

import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.server.config.ConfigFiles;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.testing.FakeTicker;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The Envoy service in process, on the memory store and a fake clock: calls are answered
 * synchronously, and time moves only when a test moves it.
 */
final class EnvoyHarness implements AutoCloseable {
  /** A day boundary (2023-11-15T00:00:00Z), so that every unit's fixed window starts here. */
  static final long START_MICROS = 19_676L * 86_400 * 1_000_000;

  final FakeTicker ticker = new FakeTicker(START_MICROS);
  final RateLimiter limiter;
  final ServiceConfig config;
  final EnvoyRateLimitService service;

  private EnvoyHarness(ServiceConfig config, EnvoyOptions options) {
    this.config = config;
    this.limiter = Sluice.builder().ticker(ticker).rules(config.rules()).build();
    this.service = new EnvoyRateLimitService(limiter, config::domains, options, new TickerClock(ticker));
  }

  static EnvoyHarness load(Path path) throws ConfigException {
    return load(path, EnvoyOptions.DEFAULT);
  }

  static EnvoyHarness load(Path path, EnvoyOptions options) throws ConfigException {
    return new EnvoyHarness(ConfigFiles.load(path, options.mergeDomains()), options);
  }

  static EnvoyHarness yaml(String yaml) throws ConfigException {
    return yaml(yaml, EnvoyOptions.DEFAULT);
  }

  static EnvoyHarness yaml(String yaml, EnvoyOptions options) throws ConfigException {
    return new EnvoyHarness(ConfigFiles.load(Map.of(Path.of("test.yaml"), yaml), options.mergeDomains()), options);
  }

  /** Moves the fake clock by {@code ms} milliseconds. */
  void advanceMillis(long ms) {
    ticker.advance(java.time.Duration.ofMillis(ms));
  }

  static Path readmeExamples() {
    return Path.of("src/test/resources/envoy/readme");
  }

  /** A descriptor from alternating keys and values. */
  static RateLimitDescriptor d(String... kv) {
    RateLimitDescriptor.Builder b = RateLimitDescriptor.newBuilder();
    for (int i = 0; i < kv.length; i += 2) {
      b.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(kv[i]).setValue(kv[i + 1]));
    }
    return b.build();
  }

  RateLimitResponse call(String domain, RateLimitDescriptor... ds) {
    RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain(domain);
    for (RateLimitDescriptor d : ds) {
      b.addDescriptors(d);
    }
    return call(b.build());
  }

  RateLimitResponse call(RateLimitRequest request) {
    Capture c = new Capture();
    service.shouldRateLimit(request, c);
    if (c.error.get() != null) {
      throw new AssertionError("the call failed: " + c.error.get());
    }
    if (c.response.get() == null || !c.completed) {
      throw new AssertionError("no response");
    }
    return c.response.get();
  }

  Status callError(RateLimitRequest request) {
    Capture c = new Capture();
    service.shouldRateLimit(request, c);
    if (c.error.get() == null) {
      throw new AssertionError("expected an error, got " + c.response.get());
    }
    return Status.fromThrowable(c.error.get());
  }

  /** Calls {@code n} times and returns the last response. */
  RateLimitResponse callTimes(int n, String domain, RateLimitDescriptor... ds) {
    RateLimitResponse last = null;
    for (int i = 0; i < n; i++) {
      last = call(domain, ds);
    }
    return last;
  }

  @Override
  public void close() {
    limiter.close();
  }

  private static final class Capture implements StreamObserver<RateLimitResponse> {
    final AtomicReference<RateLimitResponse> response = new AtomicReference<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    volatile boolean completed;

    @Override
    public void onNext(RateLimitResponse value) {
      response.set(value);
    }

    @Override
    public void onError(Throwable t) {
      error.set(t);
    }

    @Override
    public void onCompleted() {
      completed = true;
    }
  }

  private static final class TickerClock extends Clock {
    private final FakeTicker ticker;

    TickerClock(FakeTicker ticker) {
      this.ticker = ticker;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public long millis() {
      return ticker.nowMicros() / 1000;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }
  }
}
