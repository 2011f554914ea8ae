package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc.RateLimitServiceBlockingStub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Envoy-format file that leases a descriptor's limit ({@code sluice: {mode: leased}}), served
 * as {@code sluice serve} serves it, on the memory store and on Redis: Envoy's calls are decided
 * from units leased out of the store — far fewer takes than decisions — and never more than the
 * limit is admitted.
 */
class EnvoyLeasedDescriptorServeTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final String RULE = "envoy:api/generic_key:global";
  private static final int LIMIT = 2_000;

  @TempDir
  Path dir;

  @Test
  void onTheMemoryStore() throws Exception {
    run(MemoryStore.create());
  }

  @Test
  void onRedis() throws Exception {
    run(RedisStore.connect(redis.get().uri()));
  }

  private void run(Store store) throws Exception {
    Files.writeString(dir.resolve("api.yaml"), """
        domain: api
        descriptors:
          - key: generic_key
            value: global
            rate_limit: {unit: hour, requests_per_unit: LIMIT}
            sluice: {algorithm: sliding_log, mode: leased, lease_slack: 10%}   # no refill within the test
        """.replace("LIMIT", String.valueOf(LIMIT)));
    SluiceService.Settings s = SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1));
    try (SluiceService service = SluiceService.start(s, store)) {
      ServiceClient client = new ServiceClient(service.port());
      RateLimitServiceBlockingStub envoy = client.envoy();
      RateLimitRequest global = RateLimitRequest.newBuilder().setDomain("api").addDescriptors(RateLimitDescriptor
          .newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder().setKey("generic_key").setValue("global")))
          .build();
      int admitted = 0;
      int calls = LIMIT + 50;
      for (int i = 0; i < calls; i++) {
        if (envoy.shouldRateLimit(global).getOverallCode() == Code.OK) {
          admitted++;
        }
      }
      double takes = metric(client.get("/metrics").body(), "sluice_lease_takes_total");
      System.out.println(store.getClass().getSimpleName() + ": " + admitted + " of " + calls + " admitted, "
          + (long) takes + " takes");
      // Within the limit, and (one instance, so no unit is held elsewhere) all of it usable.
      assertThat(admitted).isLessThanOrEqualTo(LIMIT).isGreaterThanOrEqualTo(LIMIT * 97 / 100);
      // Decided locally: a take (one store call) serves many decisions.
      assertThat(takes).isPositive().isLessThan(calls / 5.0);
    }
  }

  /** The value of {@code name}'s sample for the leased rule in Prometheus' text format. */
  private static double metric(String text, String name) {
    for (String line : text.split("\n")) {
      if (line.startsWith(name + "{") && line.contains("rule=\"" + RULE + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    throw new AssertionError("no " + name + " for rule " + RULE + " in /metrics");
  }
}
