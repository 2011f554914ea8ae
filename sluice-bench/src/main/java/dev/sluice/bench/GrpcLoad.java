package dev.sluice.bench;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.grpc.GrpcClients;
import com.linecorp.armeria.common.util.EventLoopGroups;
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
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * gRPC load on the service's Envoy RateLimitService ({@code ShouldRateLimit}): domain
 * {@code auth}, descriptor {@code user=<key>} with the windows 20/60s + 5/3s (Sluice's extension),
 * a fixed number of calls in flight on one HTTP/2 connection, memory store then Redis — or, with
 * {@code --target host:port}, a service already running with {@link #ENVOY} in its configuration.
 *
 * <p>The client works as wrk does: each of the {@code --inflight} callers sends its next call from
 * the completion of its previous one, on the client's own event loop. No other thread takes part,
 * so a call never waits for a thread to be scheduled, and the client never shares an event loop
 * with the service it measures.
 *
 * <p>Options: {@code --seconds} measured (15), {@code --warmup} at least (8) and
 * {@code --warmup-max} at most (120) seconds of warm-up (see {@code warmUp}), {@code --inflight} (64),
 * {@code --keys} (10000,1), {@code --stores} (memory,redis), {@code --loops} client event loops (1),
 * {@code --target} host:port.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.GrpcLoad --seconds 15 --inflight 64 --keys 10000,1
 * java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.GrpcLoad --target 127.0.0.1:8080 --keys 10000
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
        "keys", "10000,1", "stores", "memory,redis", "target", "", "loops", "1", "warmup-max", "120"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--") || !o.containsKey(args[i].substring(2))) {
        throw new IllegalArgumentException("unknown option '" + args[i] + "'; known: " + o.keySet());
      }
      o.put(args[i].substring(2), args[i + 1]);
    }
    int inflight = Integer.parseInt(o.get("inflight"));
    int loops = Integer.parseInt(o.get("loops"));
    System.out.println("## gRPC load (Envoy ShouldRateLimit), " + ZonedDateTime.now());
    System.out.println();
    System.out.println("| store | keys | in flight | warm-up s | decisions/s | OK | p50 µs | p99 µs | p99.9 µs | errors |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    EventLoopGroup clientLoops = EventLoopGroups.newEventLoopGroup(loops);
    try (ClientFactory factory = ClientFactory.builder().workerGroup(clientLoops, true).build()) {
      if (!o.get("target").isEmpty()) {
        for (String keys : o.get("keys").split(",")) {
          measure(factory, "http://" + o.get("target"), "(target)", Integer.parseInt(keys), inflight, o);
        }
        return;
      }
      Path dir = Files.createTempDirectory("sluice-grpc-load-");
      Files.writeString(dir.resolve("envoy.yaml"), ENVOY);
      for (String storeName : o.get("stores").split(",")) {
        try (Standalone redis = storeName.equals("redis") ? Standalone.start(Flavor.REDIS) : null) {
          for (String keys : o.get("keys").split(",")) {
            if (redis != null) {
              redis.command("FLUSHALL");
            }
            Store store = redis == null ? MemoryStore.create() : RedisStore.connect(redis.uri());
            try (SluiceService service = SluiceService.start(
                SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0), store)) {
              measure(factory, "http://127.0.0.1:" + service.port(), storeName, Integer.parseInt(keys), inflight, o);
            }
          }
        }
      }
    }
  }

  private static void measure(ClientFactory factory, String uri, String storeName, int keys, int inflight,
      Map<String, String> o) throws InterruptedException {
    RateLimitServiceGrpc.RateLimitServiceStub stub = GrpcClients.builder(uri).factory(factory)
        .build(RateLimitServiceGrpc.RateLimitServiceStub.class);
    RateLimitRequest[] requests = requests(keys);
    int warmed = warmUp(stub, requests, inflight, Integer.parseInt(o.get("warmup")),
        Integer.parseInt(o.get("warmup-max")));
    Stats s = drive(stub, requests, inflight, Integer.parseInt(o.get("seconds")));
    System.out.printf(Locale.ROOT, "| %s | %,d | %d | %d | %,.0f | %.1f%% | %.0f | %.0f | %.0f | %d |%n", storeName,
        keys, inflight, warmed, s.done / s.seconds, 100.0 * s.ok / Math.max(1, s.done), s.quantile(0.5) / 1e3,
        s.quantile(0.99) / 1e3, s.quantile(0.999) / 1e3, s.errors);
  }

  /**
   * Drives the service until this process's JIT compilers have gone quiet and the rate has
   * stopped rising: at least {@code minSeconds}, then until a 2-second slice in which the
   * compilers spent less than 250 ms and which was no more than 5% faster than the slice before,
   * at most {@code maxSeconds}. A fixed warm-up is not enough on a busy machine: the compilers get
   * only a share of the CPU, and a run that starts before the client's and the service's code is
   * compiled measures the interpreter (under four CPU hogs on two cores the compilers were busy
   * for the first 50 s, and a run after 8 s of warm-up gave a tenth of the steady rate).
   *
   * @return the seconds spent
   */
  static int warmUp(RateLimitServiceGrpc.RateLimitServiceStub stub, RateLimitRequest[] requests, int inflight,
      int minSeconds, int maxSeconds) throws InterruptedException {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    int elapsed = 0;
    double previous = 0;
    while (elapsed < maxSeconds) {
      long compiledBefore = jit.getTotalCompilationTime();
      Stats s = drive(stub, requests, inflight, 2);
      elapsed += 2;
      double rate = s.done / s.seconds;
      boolean compilersQuiet = jit.getTotalCompilationTime() - compiledBefore < 250;
      if (elapsed >= minSeconds && compilersQuiet && rate <= previous * 1.05) {
        break;
      }
      previous = rate;
    }
    return elapsed;
  }

  /** The requests, built once, so that the client spends its time on calls and not on building them. */
  static RateLimitRequest[] requests(int keys) {
    RateLimitRequest[] r = new RateLimitRequest[keys];
    for (int i = 0; i < keys; i++) {
      r[i] = RateLimitRequest.newBuilder().setDomain("auth")
          .addDescriptors(RateLimitDescriptor.newBuilder()
              .addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("user")
                  .setValue(String.format(Locale.ROOT, "user:%07d", i))))
          .build();
    }
    return r;
  }

  /** Completed calls and their latencies (10 µs buckets up to 1 s). */
  static final class Stats {
    final AtomicLongArray buckets = new AtomicLongArray(100_001);
    final AtomicLong doneCount = new AtomicLong();
    final AtomicLong okCount = new AtomicLong();
    final AtomicLong errorCount = new AtomicLong();
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

  /**
   * Runs {@code inflight} callers for {@code seconds}; counts the calls that completed before the
   * end (those still in flight then are waited for, not counted).
   */
  static Stats drive(RateLimitServiceGrpc.RateLimitServiceStub stub, RateLimitRequest[] requests, int inflight,
      int seconds) throws InterruptedException {
    Stats s = new Stats();
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(seconds);
    CountDownLatch stopped = new CountDownLatch(inflight);
    for (int i = 0; i < inflight; i++) {
      new Caller(stub, requests, s, end, stopped, new SplittableRandom(i)).next();
    }
    if (!stopped.await(seconds + 60L, TimeUnit.SECONDS)) {
      throw new IllegalStateException("calls still in flight a minute after the end of the run");
    }
    s.seconds = seconds;
    s.done = s.doneCount.get();
    s.ok = s.okCount.get();
    s.errors = s.errorCount.get();
    return s;
  }

  /**
   * One caller: a call at a time, the next one sent from the completion of the previous one (on
   * the client's event loop, so the call is written without a hand-off between threads). Its
   * fields are only touched by one call at a time, each completion happening after the call that
   * set them.
   */
  private static final class Caller implements StreamObserver<RateLimitResponse> {
    private final RateLimitServiceGrpc.RateLimitServiceStub stub;
    private final RateLimitRequest[] requests;
    private final Stats stats;
    private final long end;
    private final CountDownLatch stopped;
    private final SplittableRandom rnd;
    private long sentAt;
    private boolean ok;

    Caller(RateLimitServiceGrpc.RateLimitServiceStub stub, RateLimitRequest[] requests, Stats stats, long end,
        CountDownLatch stopped, SplittableRandom rnd) {
      this.stub = stub;
      this.requests = requests;
      this.stats = stats;
      this.end = end;
      this.stopped = stopped;
      this.rnd = rnd;
    }

    void next() {
      if (System.nanoTime() - end >= 0) {
        stopped.countDown();
        return;
      }
      ok = false;
      sentAt = System.nanoTime();
      stub.shouldRateLimit(requests[requests.length == 1 ? 0 : rnd.nextInt(requests.length)], this);
    }

    @Override
    public void onNext(RateLimitResponse r) {
      ok = r.getOverallCode() == RateLimitResponse.Code.OK;
    }

    @Override
    public void onError(Throwable t) {
      if (record()) {
        stats.errorCount.incrementAndGet();
      }
      next();
    }

    @Override
    public void onCompleted() {
      if (record() && ok) {
        stats.okCount.incrementAndGet();
      }
      next();
    }

    /** Records the call if it completed before the end of the run. */
    private boolean record() {
      long now = System.nanoTime();
      if (now - end > 0) {
        return false;
      }
      long micros10 = (now - sentAt) / 10_000;
      stats.buckets.incrementAndGet((int) Math.min(micros10, stats.buckets.length() - 1));
      stats.doneCount.incrementAndGet();
      return true;
    }
  }
}
