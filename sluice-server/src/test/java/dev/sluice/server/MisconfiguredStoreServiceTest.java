package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.ItemDecision;
import dev.sluice.RuleSet;
import dev.sluice.StoreException;
import dev.sluice.config.ConfigException;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service with a rule its store cannot decide (refused at start and on reload, the last good
 * configuration staying in force), and with a store that cannot decide a request (the request
 * fails cleanly over HTTP and gRPC instead of being admitted by {@code failure_mode: open}).
 */
class MisconfiguredStoreServiceTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  static final String GOOD = """
      limits:
        - name: big.log
          config:
            - limit: 10000000
              period: 1m
      """;
  static final String TOO_BIG = """
      limits:
        - name: big.log
          config:
            - limit: 10000001
              period: 1m
      """;
  static final String OPEN = """
      limits:
        - name: open.rule
          failure_mode: open
          config:
            - limit: 10
              period: 1h
      """;
  static final String ENVOY = """
      domain: edge
      descriptors:
        - key: remote_address
          rate_limit:
            unit: hour
            requests_per_unit: 3
      """;

  @TempDir
  Path dir;

  private SluiceService start(String yaml, Store store) throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), yaml);
    return SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withPollInterval(Duration.ofHours(1)).withDrainTimeout(Duration.ofSeconds(5)), store);
  }

  private static double metric(ServiceClient c, String sample) throws Exception {
    for (String line : c.get("/metrics").body().split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    return 0;
  }

  @Test
  void aReloadWithARuleTheRedisStoreCannotDecideIsRejectedAndTheLastGoodConfigurationStays() throws Exception {
    try (SluiceService s = start(GOOD, RedisStore.connect(redis.get().uri()))) {
      ServiceClient c = new ServiceClient(s.port());
      RuleSet before = s.limiter().rules();
      Files.writeString(dir.resolve("limits.yaml"), TOO_BIG);

      assertThat(s.reloader().check()).isFalse();

      String error = s.reloader().status().lastError();
      assertThat(error).contains("limits.yaml:2:").contains("rule 'big.log'").contains("window 10000001 per 1m")
          .contains("sliding_log supports limits up to 10000000");
      assertThat(s.limiter().rules()).isSameAs(before);
      JsonNode rules = c.getJson("/v1/rules");
      assertThat(rules.get("lastReload").get("ok").asBoolean()).isFalse();
      assertThat(rules.get("lastReload").get("error").asText()).isEqualTo(error);
      assertThat(rules.get("generation").asLong()).isEqualTo(1);
      assertThat(metric(c, "sluice_config_reloads_total{result=\"failed\"}")).isEqualTo(1);
      HttpResponse<String> r = c.post("/v1/acquire", "{\"rule\":\"big.log\",\"key\":\"k\"}");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(ServiceClient.json(r).get("items").get(0).get("windows").get(0).get("limit").asLong())
          .isEqualTo(10_000_000);
      assertThat(ServiceClient.json(r).has("degraded")).isFalse();
    }
  }

  @Test
  void aServiceWhoseConfigurationHasARuleTheRedisStoreCannotDecideDoesNotStart() {
    assertThatThrownBy(() -> start(TOO_BIG, RedisStore.connect(redis.get().uri())).close())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("limits.yaml:2:")
        .hasMessageContaining("rule 'big.log': window 10000001 per 1m: the Redis store's sliding_log supports limits"
            + " up to 10000000; use sliding_window for larger limits");
  }

  /** A remote-looking store over the memory store whose decisions fail as a script error does. */
  static final class RejectingStore implements Store {
    final MemoryStore memory = MemoryStore.create();
    volatile boolean rejects;

    @Override
    public CompletionStage<List<ItemDecision>> decide(Batch batch) {
      return rejects
          ? CompletableFuture.failedFuture(new StoreException("the Redis store refused the decision: WRONGTYPE "
              + "Operation against a key holding the wrong kind of value"))
          : memory.decide(batch);
    }

    @Override
    public CompletionStage<Void> reset(String rule, String key) {
      return memory.reset(rule, key);
    }

    @Override
    public void rulesChanged(RuleSet before, RuleSet after) {
      memory.rulesChanged(before, after);
    }

    @Override
    public CompletionStage<Boolean> ping() {
      return CompletableFuture.completedFuture(true);
    }

    @Override
    public String describe() {
      return "rejecting store";
    }

    @Override
    public void close() {
      memory.close();
    }
  }

  @Test
  void aRequestTheStoreCannotDecideFailsCleanlyOverHttpAndGrpcInsteadOfBeingAdmittedByFailureModeOpen()
      throws Exception {
    RejectingStore store = new RejectingStore();
    Files.writeString(dir.resolve("edge.yaml"), ENVOY);
    try (SluiceService s = start(OPEN, store)) {
      ServiceClient c = new ServiceClient(s.port());
      store.rejects = true;

      HttpResponse<String> r = c.post("/v1/acquire", "{\"rule\":\"open.rule\",\"key\":\"k\"}");
      assertThat(r.statusCode()).isEqualTo(503);
      JsonNode body = ServiceClient.json(r);
      assertThat(body.get("error").get("code").asText()).isEqualTo("unavailable");
      assertThat(r.body()).doesNotContain("Exception").doesNotContain("dev.sluice").doesNotContain("allowed");

      RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("edge").addDescriptors(
          RateLimitDescriptor.newBuilder().addEntries(RateLimitDescriptor.Entry.newBuilder()
              .setKey("remote_address").setValue("1.2.3.4"))).build();
      assertThatThrownBy(() -> c.envoy().shouldRateLimit(req))
          .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(e.getStatus().getDescription()).doesNotContain("Exception").doesNotContain("dev.sluice");
          });

      assertThat(metric(c, "sluice_store_errors_by_kind_total{kind=\"rejected\"}")).isEqualTo(2);
      assertThat(metric(c, "sluice_decisions_total{outcome=\"degraded\",rule=\"open.rule\"}")).isZero();
      assertThat(metric(c, "sluice_decisions_total{outcome=\"allowed\",rule=\"open.rule\"}")).isZero();

      store.rejects = false;
      assertThat(c.post("/v1/acquire", "{\"rule\":\"open.rule\",\"key\":\"k\"}").statusCode()).isEqualTo(200);
    }
  }
}
