package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readiness tells the truth when Redis answers PING but refuses every decision: over its
 * {@code maxmemory} with {@code noeviction}, each script call fails with an OOM error. It used
 * to stay 200, PING being all it asked.
 */
class ReadinessOnRedisOutOfMemoryTest {
  @TempDir
  Path dir;

  @Test
  void readinessFailsWhileEveryStoreCallFailsAndRecoversWithTheStore() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api.call
            config:
              - limit: 1000000
                period: 1h
        """);
    try (Standalone redis = Standalone.start(Flavor.REDIS, "maxmemory-policy noeviction");
        SluiceService service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
            .withDrainTimeout(Duration.ofSeconds(1)), RedisStore.connect(redis.uri()))) {
      ServiceClient c = new ServiceClient(service.port());
      assertThat(decide(c, "before")).isFalse();
      assertThat(c.get("/readyz").statusCode()).isEqualTo(200);

      // About 2 MB of data, then a limit of 1 MB: every write is refused from now on.
      String value = "x".repeat(10_000);
      for (int i = 0; i < 200; i++) {
        redis.command("SET", "fill:" + i, value);
      }
      redis.command("CONFIG", "SET", "maxmemory", "1mb");
      assertThat(String.valueOf(redis.command("PING"))).contains("PONG");

      HttpResponse<String> ready = null;
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      int calls = 0;
      while (System.nanoTime() < deadline) {
        assertThat(decide(c, "k" + calls++)).as("a decision while Redis is out of memory is degraded").isTrue();
        ready = c.get("/readyz");
        if (ready.statusCode() == 503) {
          break;
        }
        Thread.sleep(100);
      }
      assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
      assertThat(ServiceClient.json(ready).get("status").asText()).isEqualTo("store failing");
      // What an alert sees of it (docs/monitoring): the instance's store is failing.
      assertThat(c.get("/metrics").body()).contains("sluice_store_failing 1.0");

      redis.command("CONFIG", "SET", "maxmemory", "0");
      assertThat(decide(c, "after")).isFalse();
      assertThat(c.get("/readyz").statusCode()).isEqualTo(200);
      assertThat(c.get("/metrics").body()).contains("sluice_store_failing 0.0");
    }
  }

  /** Acquires one unit of {@code key}: whether the decision was degraded. */
  private static boolean decide(ServiceClient c, String key) throws Exception {
    HttpResponse<String> r = c.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"" + key + "\"}");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return ServiceClient.json(r).path("degraded").asBoolean(false);
  }
}
