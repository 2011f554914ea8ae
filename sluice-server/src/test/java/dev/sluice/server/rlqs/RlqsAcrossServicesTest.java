package dev.sluice.server.rlqs;

import static dev.sluice.server.rlqs.ProxyStream.usage;
import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.grpc.GrpcClients;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse.BucketAction;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaServiceGrpc;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two services on one store, each holding one proxy's stream on the same bucket: their streams
 * share the bucket's rate in proportion to the proxies' demand across the services, through
 * leased mode's leader on the store's lease board, on memory and on Redis.
 */
class RlqsAcrossServicesTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  /**
   * 200 a second; leases and published shares last 30 s, so that they outlive the rounds of a
   * second each by which the test moves the fake clock (the memory store counts on it).
   */
  static final String CONFIG = """
      limits:
        - {name: tenant.requests, mode: leased, lease_length: 30s, report_interval: 100ms,
           config: [{limit: 12000, period: 1m}]}
      rlqs:
        - domain: edge
          buckets:
            - {when: {name: per_tenant}, rule: tenant.requests, key: "tenant:{tenant}"}
          unmatched: deny
      """;

  final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  /** A service on {@code store} with the quota tests' configuration, and a proxy stream to it. */
  ProxyStream serviceWithStream(Store store) throws Exception {
    Path dir = Files.createTempDirectory("sluice-rlqs-fleet");
    Files.writeString(dir.resolve("sluice.yaml"), CONFIG);
    RateLimiter limiter = Sluice.builder().store(store).ticker(ticker).build();
    open.add(limiter);
    ConfigReloader reloader = new ConfigReloader(dir, limiter, (ok, c, e) -> { }, Clock.systemUTC());
    SluiceServer server = SluiceServer.builder().limiter(limiter).store(store).config(reloader)
        .prometheus(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).host("127.0.0.1").port(0).ticker(ticker)
        .drainTimeout(Duration.ofSeconds(1)).build().start();
    open.add(server::close);
    // A proxy's stream lasts as long as the proxy: without this, the client's default response
    // timeout (10 s) ends it when the rates take longer than that to settle on a loaded machine.
    ProxyStream s = new ProxyStream(GrpcClients.builder("http://127.0.0.1:" + server.port())
        .responseTimeout(Duration.ZERO).build(RateLimitQuotaServiceGrpc.RateLimitQuotaServiceStub.class), "edge");
    open.add(s);
    return s;
  }

  @Test
  void onMemoryStreamsOfTwoServicesShareABucketInProportionToTheirDemand() throws Exception {
    MemoryStore store = MemoryStore.builder().ticker(ticker).build();
    open.add(store);
    share(store, store);
  }

  @Test
  void onRedisStreamsOfTwoServicesShareABucketInProportionToTheirDemand() throws Exception {
    String prefix = "sluice:f" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    Store one = RedisStore.builder(redis.get().uri()).prefix(prefix).build();
    Store two = RedisStore.builder(redis.get().uri()).prefix(prefix).build();
    open.add(one);
    open.add(two);
    share(one, two);
  }

  /**
   * Proxy A offers 300 a second through one service and proxy B 100 through the other, on a bucket
   * of 200 a second: each alone takes the whole rate at first; within a few report rounds the
   * rates settle at about 3 : 1, together about the bucket's rate.
   */
  void share(Store one, Store two) throws Exception {
    ProxyStream a = serviceWithStream(one);
    ProxyStream b = serviceWithStream(two);
    BucketId id = AbstractRlqsTest.tenant("fleet" + ThreadLocalRandom.current().nextInt(1_000_000));
    BucketAction lastA = AbstractRlqsTest.only(a.exchange(usage(id, 0, 300, 1000)), id);
    BucketAction lastB = AbstractRlqsTest.only(b.exchange(usage(id, 0, 100, 1000)), id);
    double ra = 0;
    double rb = 0;
    int rounds = 0;
    while (rounds < 30) {
      rounds++;
      ticker.advance(Duration.ofMillis(1000));
      // The services report their streams' demand each report interval of the fake clock, on their
      // sweeps (every 100 ms of real time): give them several, a loaded machine delays some.
      Thread.sleep(1000);
      long allowedA = Math.min(300, (long) AbstractRlqsTest.rate(AbstractRlqsTest.tokenBucket(lastA)));
      long allowedB = Math.min(100, (long) AbstractRlqsTest.rate(AbstractRlqsTest.tokenBucket(lastB)));
      lastA = AbstractRlqsTest.only(a.exchange(usage(id, allowedA, 300 - allowedA, 1000)), id);
      lastB = AbstractRlqsTest.only(b.exchange(usage(id, allowedB, 100 - allowedB, 1000)), id);
      ra = AbstractRlqsTest.rate(AbstractRlqsTest.tokenBucket(lastA));
      rb = AbstractRlqsTest.rate(AbstractRlqsTest.tokenBucket(lastB));
      if (ra / rb > 2.4 && ra / rb < 3.7 && ra + rb <= 225) {
        break;
      }
    }
    // A stream keeps its strategy while its rate moves by 10 % or less, so each rate may stay up to
    // 10 % from its share: 3 × 0.9 ÷ 1.1 to 3 × 1.1 ÷ 0.9, and the sum up to 10 % over the bucket's.
    assertThat(ra / rb).as("A's rate over B's after %d rounds", rounds).isBetween(2.4, 3.7);
    assertThat(ra + rb).as("the rates together").isBetween(180.0, 225.0);
    // A round is a second of the proxies' reports; settling takes the services' reports, the
    // leader's cycle and the next reports: a few rounds.
    assertThat(rounds).isLessThanOrEqualTo(6);
  }
}
