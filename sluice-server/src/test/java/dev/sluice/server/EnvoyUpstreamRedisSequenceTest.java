package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc.RateLimitServiceBlockingStub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * envoyproxy/ratelimit's integration test (testBasicBaseConfig, as its TestBasicConfig runs it on
 * Redis, with and without its local cache) against a running service on a real Redis, over gRPC,
 * on upstream's runtime directory unchanged. As upstream's, the durations are read from the
 * answers (real time) and checked to be whole seconds within the unit.
 */
class EnvoyUpstreamRedisSequenceTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final Path UPSTREAM = Path.of("src/test/resources/envoy/upstream/integration");

  @TempDir
  Path dir;

  @Test
  void basicBaseConfigOnRedis() throws Exception {
    run(0, "");
  }

  /**
   * Upstream's "WithLocalCache" variants: its `_local` keys, and Sluice's denial cache on. The
   * answers are upstream's but for the descriptors a cached denial leaves unevaluated.
   */
  @Test
  void basicBaseConfigOnRedisWithADenialCache() throws Exception {
    run(1000, "_local");
  }

  private void run(int denialCache, String suffix) throws Exception {
    try (Stream<Path> files = Files.list(UPSTREAM)) {
      for (Path f : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        Files.copy(f, dir.resolve(f.getFileName()));
      }
    }
    SluiceService.Settings s = SluiceService.Settings.of(dir).withPort(0).withDenialCache(denialCache)
        .withDrainTimeout(Duration.ofSeconds(1));
    try (SluiceService service = SluiceService.start(s, RedisStore.connect(redis.get().uri()))) {
      RateLimitServiceBlockingStub envoy = new ServiceClient(service.port()).envoy();
      // The minute and hour counts below must fall in one window: start clear of a minute's end.
      long second = Instant.now().getEpochSecond() % 60;
      if (second >= 55) {
        Thread.sleep((60 - second) * 1000 + 100);
      }

      assertThat(envoy.shouldRateLimit(request("foo", d("hello" + suffix, "world")))).isEqualTo(
          RateLimitResponse.newBuilder().setOverallCode(Code.OK).addStatuses(DescriptorStatus.newBuilder()
              .setCode(Code.OK)).build());

      RateLimitResponse r = envoy.shouldRateLimit(request("basic", d("key1" + suffix, "foo")));
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertStatus(r.getStatuses(0), Code.OK, 50, Unit.SECOND, 49, 1);

      String value = UUID.randomUUID().toString();
      for (int i = 0; i < 25; i++) {
        boolean over = i >= 20;
        r = envoy.shouldRateLimit(request("another", d("key2" + suffix, value)));
        assertThat(r.getOverallCode()).as("call %d", i).isEqualTo(over ? Code.OVER_LIMIT : Code.OK);
        assertStatus(r.getStatuses(0), over ? Code.OVER_LIMIT : Code.OK, 20, Unit.MINUTE, over ? 0 : 20 - (i + 1), 60);
      }

      // One transaction per request: once key3 is over, key2 is not counted (upstream with
      // STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT).
      value = UUID.randomUUID().toString();
      for (int i = 0; i < 15; i++) {
        boolean over = i >= 10;
        r = envoy.shouldRateLimit(request("another", d("key2" + suffix, value), d("key3" + suffix, value)));
        assertThat(r.getOverallCode()).as("call %d: %s", i, r).isEqualTo(over ? Code.OVER_LIMIT : Code.OK);
        if (denialCache > 0 && i > 10) {
          // Denied from the denial cache without a store call: key2 was not evaluated, so its
          // status has no limit, remaining or duration (a difference docs/service.md states).
          assertThat(r.getStatuses(0)).isEqualTo(DescriptorStatus.newBuilder().setCode(Code.OK).build());
        } else {
          assertStatus(r.getStatuses(0), Code.OK, 20, Unit.MINUTE, over ? 10 : 20 - (i + 1), 60);
        }
        assertStatus(r.getStatuses(1), over ? Code.OVER_LIMIT : Code.OK, 10, Unit.HOUR, over ? 0 : 10 - (i + 1), 3600);
      }

      RateLimitRequest dur = request("another", d("key4" + suffix, "durTest" + value));
      long first = envoy.shouldRateLimit(dur).getStatuses(0).getDurationUntilReset().getSeconds();
      Thread.sleep(2_000);
      long then = envoy.shouldRateLimit(dur).getStatuses(0).getDurationUntilReset().getSeconds();
      assertThat(then).isLessThan(first);
    }
  }

  private static void assertStatus(DescriptorStatus st, Code code, int perUnit, Unit unit, int remaining,
      long period) {
    assertThat(st.getCode()).as("%s", st).isEqualTo(code);
    assertThat(st.getCurrentLimit().getRequestsPerUnit()).as("%s", st).isEqualTo(perUnit);
    assertThat(st.getCurrentLimit().getUnit()).isEqualTo(unit);
    assertThat(st.getCurrentLimit().getName()).isEmpty();
    assertThat(st.getLimitRemaining()).isEqualTo(remaining);
    assertThat(st.getDurationUntilReset().getNanos()).isZero();
    assertThat(st.getDurationUntilReset().getSeconds()).isBetween(1L, period);
  }

  private static RateLimitDescriptor d(String key, String value) {
    return RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(key)
        .setValue(value)).build();
  }

  private static RateLimitRequest request(String domain, RateLimitDescriptor... ds) {
    RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain(domain);
    for (RateLimitDescriptor d : ds) {
      b.addDescriptors(d);
    }
    return b.build();
  }
}
