package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the service behaves when its store fails or is slow, and when it is shut down. */
class ServiceFailureTest {
  static final String RULES = """
      limits:
        - name: open.rule
          config:
            - limit: 10
              period: 1h
        - name: closed.rule
          failure_mode: closed
          config:
            - limit: 10
              period: 1h
        - name: shadow.rule
          shadow: true
          config:
            - limit: 1
              period: 1h
      """;

  @TempDir
  Path dir;

  private SluiceService start(ControllableStore store) throws Exception {
    return start(store, Duration.ofMillis(250));
  }

  private SluiceService start(ControllableStore store, Duration storeTimeout) throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    return SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(5)).withStoreTimeout(storeTimeout), store);
  }

  @Test
  void aFailedStoreDegradesDecisionsByFailureModeAndShowsInReadinessAndMetrics() throws Exception {
    ControllableStore store = new ControllableStore();
    try (SluiceService s = start(store)) {
      ServiceClient c = new ServiceClient(s.port());
      store.down = true;
      HttpResponse<String> open = c.post("/v1/acquire", "{\"rule\":\"open.rule\",\"key\":\"k\"}");
      assertThat(open.statusCode()).isEqualTo(200);
      assertThat(ServiceClient.json(open).get("degraded").asBoolean()).isTrue();
      HttpResponse<String> closed = c.post("/v1/acquire", "{\"rule\":\"closed.rule\",\"key\":\"k\"}");
      assertThat(closed.statusCode()).isEqualTo(429);
      JsonNode d = ServiceClient.json(closed);
      assertThat(d.get("degraded").asBoolean()).isTrue();
      assertThat(d.get("items").get(0).get("reason").asText()).isEqualTo("store_unavailable");
      assertThat(c.get("/readyz").statusCode()).isEqualTo(503);
      assertThat(c.get("/healthz").statusCode()).isEqualTo(200);
      String metrics = c.get("/metrics").body();
      assertThat(metrics).contains("sluice_decisions_total{outcome=\"degraded\",rule=\"open.rule\"} 1")
          .contains("sluice_decisions_total{outcome=\"degraded\",rule=\"closed.rule\"} 1")
          .contains("sluice_store_errors_total{rule=\"open.rule\"} 1");

      store.down = false;
      assertThat(c.get("/readyz").statusCode()).isEqualTo(200);
      HttpResponse<String> back = c.post("/v1/acquire", "{\"rule\":\"closed.rule\",\"key\":\"k\"}");
      assertThat(back.statusCode()).isEqualTo(200);
      assertThat(ServiceClient.json(back).has("degraded")).isFalse();
    }
  }

  @Test
  void shadowDenialsAreAllowedAndCountedApart() throws Exception {
    ControllableStore store = new ControllableStore();
    try (SluiceService s = start(store)) {
      ServiceClient c = new ServiceClient(s.port());
      assertThat(c.post("/v1/acquire", "{\"rule\":\"shadow.rule\",\"key\":\"k\"}").statusCode()).isEqualTo(200);
      HttpResponse<String> r = c.post("/v1/acquire", "{\"rule\":\"shadow.rule\",\"key\":\"k\"}");
      assertThat(r.statusCode()).isEqualTo(200);
      JsonNode item = ServiceClient.json(r).get("items").get(0);
      assertThat(item.get("shadow").asBoolean()).isTrue();
      assertThat(item.get("reason").asText()).isEqualTo("limit_exceeded");
      // A shadow rule limits nothing, so it is not announced in the headers.
      assertThat(r.headers().firstValue("ratelimit-policy")).isEmpty();
      assertThat(c.get("/metrics").body())
          .contains("sluice_decisions_total{outcome=\"shadow_denied\",rule=\"shadow.rule\"} 1")
          .contains("sluice_decisions_total{outcome=\"allowed\",rule=\"shadow.rule\"} 1");
    }
  }

  @Test
  void requestsWaitingForASlowStoreHoldNoEventLoop() throws Exception {
    ControllableStore store = new ControllableStore();
    // More waiting requests than the server has event loops (two per CPU), each from a thread.
    int waiting = 4 * Runtime.getRuntime().availableProcessors() + 1;
    ExecutorService clients = Executors.newFixedThreadPool(waiting);
    try (SluiceService s = start(store, Duration.ofSeconds(30))) {
      ServiceClient c = new ServiceClient(s.port());
      store.hold = true;
      List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
      for (int i = 0; i < waiting; i++) {
        String body = "{\"rule\":\"open.rule\",\"key\":\"slow" + i + "\"}";
        inFlight.add(CompletableFuture.supplyAsync(() -> {
          try {
            return c.post("/v1/acquire", body);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, clients));
      }
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(10), () -> store.pending.get() == waiting);
      assertThat(c.get("/healthz").statusCode()).isEqualTo(200);
      assertThat(c.post("/v1/acquire", "{\"rule\":\"nope\",\"key\":\"k\"}").statusCode()).isEqualTo(400);
      assertThat(inFlight).noneMatch(CompletableFuture::isDone);
      store.release();
      for (CompletableFuture<HttpResponse<String>> f : inFlight) {
        assertThat(f.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      }
    } finally {
      clients.shutdownNow();
    }
  }

  @Test
  void shutdownAnswersTheRequestsInFlightBeforeStopping() throws Exception {
    ControllableStore store = new ControllableStore();
    // A store timeout longer than the test, so that held requests stay in flight.
    SluiceService s = start(store, Duration.ofSeconds(30));
    ServiceClient c = new ServiceClient(s.port());
    store.hold = true;
    List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      inFlight.add(CompletableFuture.supplyAsync(() -> {
        try {
          return c.post("/v1/acquire", "{\"rule\":\"open.rule\",\"key\":\"drain\"}");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }));
    }
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(5), () -> store.pending.get() == 3);
    CompletableFuture<Void> closing = CompletableFuture.runAsync(s::close);
    // The server waits for the held requests instead of cutting them off: give it time to
    // (wrongly) finish, then look.
    Thread.sleep(700);
    assertThat(closing).isNotDone();
    store.release();
    closing.get(10, java.util.concurrent.TimeUnit.SECONDS);
    for (CompletableFuture<HttpResponse<String>> f : inFlight) {
      HttpResponse<String> r = f.get(5, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(ServiceClient.json(r).has("degraded")).isFalse();
    }
  }
}
