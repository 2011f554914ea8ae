package dev.sluice.bench;

import com.linecorp.armeria.client.grpc.GrpcClients;
import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.SluiceService;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * gRPC load on the service's Envoy RateLimitService ({@code ShouldRateLimit}): domain
 * {@code auth}, descriptor {@code user=<key>} with the windows 20/60s + 5/3s (Sluice's extension),
 * a fixed number of calls in flight on one HTTP/2 connection, memory store then Redis.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.GrpcLoad --seconds 15 --inflight 64 --keys 10000,1
 * </pre>
 */
public final class GrpcLoad {
  private GrpcLoad() {}

  static final String ENVOY = """
      domain: auth
      descriptors:
        - key: user
          sluice:
            windows:
              - {limit: 20, period: 60s}
              - {limit: 5, period: 3s}
      """;

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new LinkedHashMap<>(Map.of("seconds", "15", "warmup", "8", "inflight", "64",
        "keys", "10000,1", "stores", "memory,redis"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--") || !o.containsKey(args[i].substring(2))) {
        throw new IllegalArgumentException("unknown option '" + args[i] + "'; known: " + o.keySet());
      }
      o.put(args[i].substring(2), args[i + 1]);
    }
    Path dir = Files.createTempDirectory("sluice-grpc-load-");
    Files.writeString(dir.resolve("envoy.yaml"), ENVOY);
    System.out.println("## gRPC load (Envoy ShouldRateLimit), " + ZonedDateTime.now());
    System.out.println();
    System.out.println("| store | keys | in flight | decisions/s | OK | p50 µs | p99 µs | p99.9 µs | errors |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (String storeName : o.get("stores").split(",")) {
      try (Standalone redis = storeName.equals("redis") ? Standalone.start(Flavor.REDIS) : null) {
        for (String keys : o.get("keys").split(",")) {
          if (redis != null) {
            redis.command("FLUSHALL");
          }
          Store store = redis == null ? MemoryStore.create() : RedisStore.connect(redis.uri());
          try (SluiceService service = SluiceService.start(
              SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0), store)) {
            RateLimitServiceGrpc.RateLimitServiceFutureStub stub = GrpcClients.builder("http://127.0.0.1:" + service.port())
                .build(RateLimitServiceGrpc.RateLimitServiceFutureStub.class);
            int n = Integer.parseInt(keys);
            int inflight = Integer.parseInt(o.get("inflight"));
            drive(stub, n, inflight, Integer.parseInt(o.get("warmup")));
            Stats s = drive(stub, n, inflight, Integer.parseInt(o.get("seconds")));
            System.out.printf(Locale.ROOT, "| %s | %,d | %d | %,.0f | %.1f%% | %.0f | %.0f | %.0f | %d |%n", storeName, n,
                inflight, s.done / s.seconds, 100.0 * s.ok / Math.max(1, s.done), s.quantile(0.5) / 1e3,
                s.quantile(0.99) / 1e3, s.quantile(0.999) / 1e3, s.errors);
          }
        }
      }
    }
  }

  /** Completed calls and their latencies (10 µs buckets up to 1 s). */
  static final class Stats {
    final AtomicLongArray buckets = new AtomicLongArray(100_001);
    long done;
    long ok;
    long errors;
    double seconds;

    double quantile(double q) {
      long total = 0;
      for (int i = 0; i < buckets.length(); i++) {
        total += buckets.get(i);
      }
      long rank = (long) Math.ceil(q * total);
      long seen = 0;
      for (int i = 0; i < buckets.length(); i++) {
        seen += buckets.get(i);
        if (seen >= rank) {
          return i * 10_000.0 + 5_000;
        }
      }
      return Double.NaN;
    }
  }

  private static Stats drive(RateLimitServiceGrpc.RateLimitServiceFutureStub stub, int keys, int inflight,
      int seconds) throws InterruptedException {
    Stats s = new Stats();
    Semaphore slots = new Semaphore(inflight);
    AtomicLong done = new AtomicLong();
    AtomicLong ok = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    SplittableRandom rnd = new SplittableRandom(1);
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
        continue;
      }
      String key = String.format(Locale.ROOT, "user:%07d", keys == 1 ? 0 : rnd.nextInt(keys));
      RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("auth")
          .addDescriptors(RateLimitDescriptor.newBuilder()
              .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("user").setValue(key)))
          .build();
      long t0 = System.nanoTime();
      Futures.addCallback(stub.shouldRateLimit(req), new FutureCallback<RateLimitResponse>() {
        @Override
        public void onSuccess(RateLimitResponse r) {
          record(t0);
          if (r.getOverallCode() == RateLimitResponse.Code.OK) {
            ok.incrementAndGet();
          }
        }

        @Override
        public void onFailure(Throwable t) {
          record(t0);
          errors.incrementAndGet();
        }

        private void record(long t0) {
          long micros10 = (System.nanoTime() - t0) / 10_000;
          s.buckets.incrementAndGet((int) Math.min(micros10, s.buckets.length() - 1));
          done.incrementAndGet();
          slots.release();
        }
      }, MoreExecutors.directExecutor());
    }
    s.seconds = (System.nanoTime() - start) / 1e9;
    slots.tryAcquire(inflight, 30, TimeUnit.SECONDS);
    s.done = done.get();
    s.ok = ok.get();
    s.errors = errors.get();
    return s;
  }
}
