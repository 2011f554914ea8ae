package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.spi.Store;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The service end to end: a running server on a free port, driven over the network by an HTTP
 * client and by Envoy's generated gRPC stub, with a configuration directory holding a native and
 * an Envoy file side by side. Subclasses choose the store, so the same suite runs on every store.
 * One server serves the whole class (stopping one takes a couple of seconds): each test uses keys
 * of its own, and a test that changes the configuration puts it back before it ends.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractServiceEndToEndTest {
  static final String NATIVE = """
      limits:
        - name: auth.createToken
          config:
            - limit: 20
              period: 3600
            - limit: 5
              period: 10m
        - name: reports.export
          config:
            - limit: 2
              period: 1h
        - name: api.global
          config:
            - limit: 1000
              period: 1h
        - name: metrics.probe
          config:
            - limit: 2
              period: 1h
      """;
  static final String ENVOY = """
      domain: edge
      descriptors:
        - key: remote_address
          rate_limit:
            unit: hour
            requests_per_unit: 3
          sluice:
            algorithm: sliding_log
        - key: user
          descriptors:
            - key: action
              value: login
              sluice:
                windows:
                  - {limit: 10, period: 1h}
                  - {limit: 2, period: 10m}
      """;

  Path dir;
  SluiceService service;
  ServiceClient client;

  /** A new, empty store for one test. */
  protected abstract Store newStore() throws Exception;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-e2e");
    Files.writeString(dir.resolve("limits.yaml"), NATIVE);
    Files.writeString(dir.resolve("envoy.yaml"), ENVOY);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withPollInterval(Duration.ofMillis(50)).withDrainTimeout(Duration.ofSeconds(2)), newStore());
    client = new ServiceClient(service.port());
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    } catch (java.io.IOException e) {
      // A temporary directory left behind is harmless.
    }
  }

  HttpResponse<String> acquire(String body) throws Exception {
    return client.post("/v1/acquire", body);
  }

  @Test
  void anAllowedAcquireAnswers200WithTheDecisionAndRateLimitHeaders() throws Exception {
    HttpResponse<String> r = acquire("{\"rule\":\"auth.createToken\",\"key\":\"ip:10.0.0.1\"}");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).contains("json"));
    JsonNode d = ServiceClient.json(r);
    assertThat(d.get("allowed").asBoolean()).isTrue();
    assertThat(d.get("retryAfterMs").asLong()).isZero();
    assertThat(d.get("waitMs").asLong()).isZero();
    assertThat(d.has("degraded")).isFalse();
    JsonNode item = d.get("items").get(0);
    assertThat(item.get("rule").asText()).isEqualTo("auth.createToken");
    assertThat(item.get("key").asText()).isEqualTo("ip:10.0.0.1");
    assertThat(item.get("cost").asLong()).isEqualTo(1);
    assertThat(item.has("reason")).isFalse();
    JsonNode hour = item.get("windows").get(0);
    JsonNode tenMinutes = item.get("windows").get(1);
    assertThat(hour.get("limit").asLong()).isEqualTo(20);
    assertThat(hour.get("periodMs").asLong()).isEqualTo(3_600_000);
    assertThat(hour.get("remaining").asLong()).isEqualTo(19);
    assertThat(hour.get("exceeded").asBoolean()).isFalse();
    assertThat(tenMinutes.get("limit").asLong()).isEqualTo(5);
    assertThat(tenMinutes.get("remaining").asLong()).isEqualTo(4);
    assertThat(tenMinutes.get("resetAfterMs").asLong()).isBetween(1L, 600_000L);
    assertThat(r.headers().firstValue("ratelimit-policy")).hasValue(
        "\"auth.createToken.3600s\";q=20;w=3600, \"auth.createToken.600s\";q=5;w=600");
    assertThat(r.headers().firstValue("ratelimit").orElseThrow())
        .matches("\"auth\\.createToken\\.3600s\";r=19;t=\\d+, \"auth\\.createToken\\.600s\";r=4;t=\\d+");
    assertThat(r.headers().firstValue("retry-after")).isEmpty();
  }

  @Test
  void aDeniedAcquireAnswers429WithRetryAfterAndConsumesNothing() throws Exception {
    String body = "{\"rule\":\"auth.createToken\",\"key\":\"user:42\"}";
    for (int i = 0; i < 5; i++) {
      assertThat(acquire(body).statusCode()).isEqualTo(200);
    }
    HttpResponse<String> r = acquire(body);
    assertThat(r.statusCode()).isEqualTo(429);
    JsonNode d = ServiceClient.json(r);
    assertThat(d.get("allowed").asBoolean()).isFalse();
    long retryMs = d.get("retryAfterMs").asLong();
    assertThat(retryMs).isBetween(1L, 600_000L);
    JsonNode item = d.get("items").get(0);
    assertThat(item.get("reason").asText()).isEqualTo("limit_exceeded");
    assertThat(item.get("windows").get(0).get("exceeded").asBoolean()).isFalse();
    assertThat(item.get("windows").get(0).get("remaining").asLong()).isEqualTo(15);
    assertThat(item.get("windows").get(1).get("exceeded").asBoolean()).isTrue();
    assertThat(r.headers().firstValue("retry-after")).hasValue(Long.toString((retryMs + 999) / 1000));
    assertThat(r.headers().firstValue("ratelimit").orElseThrow()).contains("\"auth.createToken.600s\";r=0;");
  }

  @Test
  void theItemsOfARequestAreAllConsumedOrNone() throws Exception {
    String body = "{\"items\":[{\"rule\":\"reports.export\",\"key\":\"u1\",\"cost\":2},"
        + "{\"rule\":\"api.global\",\"key\":\"all\"}]}";
    HttpResponse<String> first = acquire(body);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(ServiceClient.json(first).get("items").get(1).get("windows").get(0).get("remaining").asLong())
        .isEqualTo(999);
    HttpResponse<String> second = acquire(body);
    assertThat(second.statusCode()).isEqualTo(429);
    JsonNode items = ServiceClient.json(second).get("items");
    assertThat(items.get(0).get("reason").asText()).isEqualTo("limit_exceeded");
    assertThat(items.get(1).get("windows").get(0).get("remaining").asLong()).isEqualTo(999);
  }

  @Test
  void aZeroCostIsAPeekThatConsumesNothing() throws Exception {
    String peek = "{\"rule\":\"reports.export\",\"key\":\"peek\",\"cost\":0}";
    assertThat(acquire(peek).statusCode()).isEqualTo(200);
    HttpResponse<String> r = acquire(peek);
    assertThat(ServiceClient.json(r).get("items").get(0).get("windows").get(0).get("remaining").asLong())
        .isEqualTo(2);
  }

  @Test
  void rulesListsEveryRuleWithItsSourceAndVersion() throws Exception {
    JsonNode rules = client.getJson("/v1/rules");
    assertThat(rules.get("generation").asLong()).isPositive();
    assertThat(rules.get("lastReload").get("ok").asBoolean()).isTrue();
    assertThat(rules.get("sources")).hasSize(2);
    JsonNode byName = index(rules.get("rules"));
    JsonNode auth = byName.get("auth.createToken");
    assertThat(auth.get("source").asText()).endsWith("limits.yaml");
    assertThat(auth.get("version").asText()).matches("[0-9a-f]{12}");
    assertThat(auth.get("algorithm").asText()).isEqualTo("sliding_log");
    assertThat(auth.get("windows")).hasSize(2);
    JsonNode envoy = byName.get("envoy:edge/remote_address");
    assertThat(envoy.get("source").asText()).endsWith("envoy.yaml");
    assertThat(envoy.get("windows").get(0).get("limit").asLong()).isEqualTo(3);
    assertThat(byName.get("envoy:edge/user/action:login").get("windows")).hasSize(2);
  }

  private static JsonNode index(JsonNode rules) {
    var o = ServiceClient.JSON.createObjectNode();
    rules.forEach(r -> o.set(r.get("name").asText(), r));
    return o;
  }

  @Test
  void resetForgetsTheStateOfOneKey() throws Exception {
    String body = "{\"rule\":\"reports.export\",\"key\":\"u2\",\"cost\":2}";
    assertThat(acquire(body).statusCode()).isEqualTo(200);
    assertThat(acquire(body).statusCode()).isEqualTo(429);
    HttpResponse<String> reset = client.post("/v1/reset", "{\"rule\":\"reports.export\",\"key\":\"u2\"}");
    assertThat(reset.statusCode()).isEqualTo(200);
    assertThat(ServiceClient.json(reset).get("reset").asBoolean()).isTrue();
    assertThat(acquire(body).statusCode()).isEqualTo(200);
  }

  @Test
  void healthAndReadinessAnswer200WhenTheStoreIsUp() throws Exception {
    assertThat(client.get("/healthz").statusCode()).isEqualTo(200);
    HttpResponse<String> ready = client.get("/readyz");
    assertThat(ready.statusCode()).isEqualTo(200);
    assertThat(ready.body()).contains("ready");
  }

  @Test
  void metricsCountDecisionsPerRuleAndOutcome() throws Exception {
    String body = "{\"rule\":\"metrics.probe\",\"key\":\"m\",\"cost\":2}";
    acquire(body);
    acquire(body);
    HttpResponse<String> m = client.get("/metrics");
    assertThat(m.statusCode()).isEqualTo(200);
    assertThat(m.headers().firstValue("content-type").orElseThrow()).startsWith("text/plain");
    assertThat(m.body())
        .contains("sluice_decisions_total{outcome=\"allowed\",rule=\"metrics.probe\"} 1")
        .contains("sluice_decisions_total{outcome=\"denied\",rule=\"metrics.probe\"} 1")
        .contains("sluice_decisions_total{outcome=\"shadow_denied\",rule=\"metrics.probe\"} 0")
        .contains("sluice_decisions_total{outcome=\"degraded\",rule=\"metrics.probe\"} 0")
        .contains("sluice_near_limit_total{rule=\"metrics.probe\"} 1")
        .contains("sluice_store_latency_seconds_bucket{rule=\"metrics.probe\"")
        .contains("sluice_store_latency_seconds_count{rule=\"metrics.probe\"} 2")
        .contains("sluice_config_reloads_total{result=\"failed\"}")
        .contains("sluice_config_last_reload_ok")
        .contains("sluice_rules");
  }

  private static RateLimitDescriptor d(String... kv) {
    RateLimitDescriptor.Builder b = RateLimitDescriptor.newBuilder();
    for (int i = 0; i < kv.length; i += 2) {
      b.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(kv[i]).setValue(kv[i + 1]));
    }
    return b.build();
  }

  @Test
  void envoyIsAnsweredOverGrpcOnTheSamePort() {
    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = client.envoy();
    RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("edge")
        .addDescriptors(d("remote_address", "1.2.3.4")).build();
    for (int i = 0; i < 3; i++) {
      RateLimitResponse r = stub.shouldRateLimit(req);
      assertThat(r.getOverallCode()).isEqualTo(Code.OK);
      assertThat(r.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(3);
      assertThat(r.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.HOUR);
      assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(2 - i);
    }
    RateLimitResponse over = stub.shouldRateLimit(req);
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    // As Envoy's service answers by default: nothing for Envoy to add to the client's response,
    // and no rule name.
    assertThat(over.getResponseHeadersToAddList()).isEmpty();
    assertThat(over.getStatuses(0).getCurrentLimit().getName()).isEmpty();
    assertThat(over.getStatuses(0).getLimitRemaining()).isZero();
  }

  @Test
  void grpcReflectionListsTheRateLimitService() throws Exception {
    var stub = com.linecorp.armeria.client.grpc.GrpcClients.builder("http://127.0.0.1:" + service.port())
        .build(io.grpc.reflection.v1.ServerReflectionGrpc.ServerReflectionStub.class);
    CompletableFuture<io.grpc.reflection.v1.ServerReflectionResponse> answer = new CompletableFuture<>();
    var requests = stub.serverReflectionInfo(new io.grpc.stub.StreamObserver<>() {
      @Override
      public void onNext(io.grpc.reflection.v1.ServerReflectionResponse r) {
        answer.complete(r);
      }

      @Override
      public void onError(Throwable t) {
        answer.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    requests.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder().setListServices("").build());
    requests.onCompleted();
    assertThat(answer.get(10, java.util.concurrent.TimeUnit.SECONDS).getListServicesResponse().getServiceList())
        .extracting(io.grpc.reflection.v1.ServiceResponse::getName)
        .contains("envoy.service.ratelimit.v3.RateLimitService");
  }

  @Test
  void anEnvoyRequestsDescriptorsAreDecidedAsOneTransaction() {
    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = client.envoy();
    RateLimitRequest req = RateLimitRequest.newBuilder().setDomain("edge")
        .addDescriptors(d("remote_address", "9.9.9.9")).addDescriptors(d("user", "7", "action", "login")).build();
    assertThat(stub.shouldRateLimit(req).getOverallCode()).isEqualTo(Code.OK);
    assertThat(stub.shouldRateLimit(req).getOverallCode()).isEqualTo(Code.OK);
    RateLimitResponse third = stub.shouldRateLimit(req);
    assertThat(third.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(third.getStatuses(1).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(third.getStatuses(0).getCode()).isEqualTo(Code.OK);
    // The per-address limit kept its third request for another caller.
    RateLimitResponse alone = stub.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("edge")
        .addDescriptors(d("remote_address", "9.9.9.9")).build());
    assertThat(alone.getOverallCode()).isEqualTo(Code.OK);
    assertThat(alone.getStatuses(0).getLimitRemaining()).isZero();
  }

  @Test
  void aValidChangeAppliesWithinTwoSecondsAndUnchangedRulesKeepTheirState() throws Exception {
    assertThat(acquire("{\"rule\":\"auth.createToken\",\"key\":\"reload\"}").statusCode()).isEqualTo(200);
    assertThat(acquire("{\"rule\":\"reports.export\",\"key\":\"reload\"}").statusCode()).isEqualTo(200);
    RateLimitServiceGrpc.RateLimitServiceBlockingStub stub = client.envoy();
    RateLimitRequest envoyReq = RateLimitRequest.newBuilder().setDomain("edge")
        .addDescriptors(d("remote_address", "5.5.5.5")).build();
    assertThat(stub.shouldRateLimit(envoyReq).getStatuses(0).getLimitRemaining()).isEqualTo(2);
    long generation = rules().get("generation").asLong();
    double oks = metric("sluice_config_reloads_total{result=\"ok\"}");
    try {
      // reports.export (the first rule of 2 per hour) goes to 10 per hour.
      Files.writeString(dir.resolve("limits.yaml"),
          NATIVE.replaceFirst("limit: 2\n(\\s+)period: 1h", "limit: 10\n$1period: 1h"));
      Files.writeString(dir.resolve("extra.yaml"), """
          domain: extra
          descriptors:
            - key: tenant
              rate_limit: {unit: minute, requests_per_unit: 7}
          """);
      awaitWithin(Duration.ofSeconds(2), () -> rules().get("sources").size() == 3 && exportLimit() == 10);

      JsonNode auth = ServiceClient.json(acquire("{\"rule\":\"auth.createToken\",\"key\":\"reload\"}"));
      assertThat(auth.get("items").get(0).get("windows").get(1).get("remaining").asLong()).isEqualTo(3);
      JsonNode reports = ServiceClient.json(acquire("{\"rule\":\"reports.export\",\"key\":\"reload\"}"));
      assertThat(reports.get("items").get(0).get("windows").get(0).get("limit").asLong()).isEqualTo(10);
      assertThat(reports.get("items").get(0).get("windows").get(0).get("remaining").asLong()).isEqualTo(9);
      assertThat(stub.shouldRateLimit(envoyReq).getStatuses(0).getLimitRemaining()).isEqualTo(1);
      RateLimitResponse extra = stub.shouldRateLimit(RateLimitRequest.newBuilder().setDomain("extra")
          .addDescriptors(d("tenant", "acme")).build());
      assertThat(extra.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(7);
      assertThat(rules().get("generation").asLong()).isGreaterThan(generation);
      assertThat(rules().get("lastReload").get("ok").asBoolean()).isTrue();
      assertThat(metric("sluice_config_reloads_total{result=\"ok\"}")).isGreaterThan(oks);
    } finally {
      Files.delete(dir.resolve("extra.yaml"));
      Files.writeString(dir.resolve("limits.yaml"), NATIVE);
      awaitWithin(Duration.ofSeconds(2), () -> rules().get("sources").size() == 2 && exportLimit() == 2);
    }
  }

  @Test
  void aBrokenFileKeepsTheLastGoodRulesAndReportsItsError() throws Exception {
    assertThat(acquire("{\"rule\":\"reports.export\",\"key\":\"broken\",\"cost\":2}").statusCode())
        .isEqualTo(200);
    long generation = rules().get("generation").asLong();
    double failures = metric("sluice_config_reloads_total{result=\"failed\"}");
    try {
      Files.writeString(dir.resolve("limits.yaml"), NATIVE.replace("period: 1h", "perod: 1h"));
      awaitWithin(Duration.ofSeconds(2), () -> !lastReload().get("ok").asBoolean());

      assertThat(lastReload().get("error").asText()).contains("limits.yaml:").contains("perod");
      assertThat(rules().get("generation").asLong()).isEqualTo(generation);
      // The old rules are still in force, with their state.
      assertThat(acquire("{\"rule\":\"reports.export\",\"key\":\"broken\"}").statusCode()).isEqualTo(429);
      assertThat(metric("sluice_config_reloads_total{result=\"failed\"}")).isEqualTo(failures + 1);
      assertThat(metric("sluice_config_last_reload_ok")).isZero();

      // A broken Envoy file is rejected the same way.
      Files.writeString(dir.resolve("limits.yaml"), NATIVE);
      awaitWithin(Duration.ofSeconds(2), () -> lastReload().get("ok").asBoolean());
      Files.writeString(dir.resolve("envoy.yaml"), ENVOY.replace("requests_per_unit", "request_per_unit"));
      awaitWithin(Duration.ofSeconds(2), () -> !lastReload().get("ok").asBoolean());
      assertThat(lastReload().get("error").asText()).contains("envoy.yaml:").contains("request_per_unit");
      assertThat(client.envoy().shouldRateLimit(RateLimitRequest.newBuilder().setDomain("edge")
          .addDescriptors(d("remote_address", "6.6.6.6")).build()).getStatuses(0).getCurrentLimit()
          .getRequestsPerUnit()).isEqualTo(3);
    } finally {
      Files.writeString(dir.resolve("limits.yaml"), NATIVE);
      Files.writeString(dir.resolve("envoy.yaml"), ENVOY);
      awaitWithin(Duration.ofSeconds(2), () -> lastReload().get("ok").asBoolean());
    }
    assertThat(metric("sluice_config_last_reload_ok")).isEqualTo(1);
  }

  private JsonNode rules() {
    try {
      return client.getJson("/v1/rules");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private long exportLimit() {
    for (JsonNode r : rules().get("rules")) {
      if (r.get("name").asText().equals("reports.export")) {
        return r.get("windows").get(0).get("limit").asLong();
      }
    }
    return -1;
  }

  /** The value of one sample of {@code /metrics}, named with its labels as Prometheus prints it. */
  private double metric(String sample) throws Exception {
    for (String line : client.get("/metrics").body().split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    throw new AssertionError("no sample " + sample);
  }

  private JsonNode lastReload() {
    try {
      return client.getJson("/v1/rules").get("lastReload");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Polls {@code condition} until it holds, failing after {@code limit}. */
  static void awaitWithin(Duration limit, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + limit);
      }
      Thread.sleep(20);
    }
  }
}
