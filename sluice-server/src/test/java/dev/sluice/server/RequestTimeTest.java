package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.memory.MemoryStore;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code "atMicros"} on {@code POST /v1/acquire}: refused by a service that does not trust request
 * times (the default), decided at that time by one started with {@code --trust-request-time}.
 */
class RequestTimeTest {
  private static final String RULES = """
      limits:
        - name: once
          config:
            - limit: 1
              period: 1s
        - name: shaped
          algorithm: leaky_bucket
          config:
            - limit: 2
              period: 1s
      """;
  /** 2026-12-11T00:00:00Z. */
  private static final long T = 1_797_120_000_000_000L;

  private Path dir;
  private SluiceService service;

  private ServiceClient start(boolean trust) throws Exception {
    dir = Files.createTempDirectory("sluice-time");
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    service = SluiceService.start(SluiceService.Settings.of(dir).withPort(0).withDrainTimeout(Duration.ofSeconds(1))
        .withTrustRequestTime(trust), MemoryStore.builder().build());
    return new ServiceClient(service.port());
  }

  @AfterEach
  void stop() throws Exception {
    if (service != null) {
      service.close();
    }
    Files.deleteIfExists(dir.resolve("limits.yaml"));
    Files.deleteIfExists(dir);
  }

  @Test
  void aServiceThatDoesNotTrustRequestTimesRefusesTheFieldNamingTheOption() throws Exception {
    ServiceClient c = start(false);
    for (String body : new String[] {"{\"rule\":\"once\",\"key\":\"k\",\"atMicros\":" + T + "}",
        "{\"items\":[{\"rule\":\"once\",\"key\":\"k\"}],\"atMicros\":" + T + "}"}) {
      HttpResponse<String> r = c.post("/v1/acquire", body);
      assertThat(r.statusCode()).isEqualTo(400);
      JsonNode e = ServiceClient.json(r).get("error");
      assertThat(e.get("code").asText()).isEqualTo("invalid_request");
      assertThat(e.get("message").asText()).contains("'atMicros'").contains("--trust-request-time");
    }
    // Nothing was consumed by the refused bodies.
    assertThat(c.post("/v1/acquire", "{\"rule\":\"once\",\"key\":\"k\"}").statusCode()).isEqualTo(200);
  }

  @Test
  void aTrustingServiceDecidesAtTheTimeGiven() throws Exception {
    ServiceClient c = start(true);
    String at0 = "{\"items\":[{\"rule\":\"once\",\"key\":\"k\"}],\"atMicros\":" + T + "}";
    assertThat(c.post("/v1/acquire", at0).statusCode()).isEqualTo(200);
    HttpResponse<String> denied = c.post("/v1/acquire", "{\"rule\":\"once\",\"key\":\"k\",\"atMicros\":"
        + (T + 400_000) + "}");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(ServiceClient.json(denied).get("retryAfterMs").asLong()).isEqualTo(600);
    assertThat(c.post("/v1/acquire", "{\"rule\":\"once\",\"key\":\"k\",\"atMicros\":" + (T + 1_000_000) + "}")
        .statusCode()).isEqualTo(200);
  }

  @Test
  void aTrustingServiceRefusesATimeOutOfRange() throws Exception {
    ServiceClient c = start(true);
    for (String v : new String[] {"-1", "1.5", "\"" + T + "\"", "253402300800000000", "99999999999999999999"}) {
      HttpResponse<String> r = c.post("/v1/acquire", "{\"rule\":\"once\",\"key\":\"k\",\"atMicros\":" + v + "}");
      assertThat(r.statusCode()).as(v).isEqualTo(400);
      assertThat(ServiceClient.json(r).get("error").get("message").asText()).as(v)
          .contains("'atMicros' must be an integer from 0 to 253402300799999999");
    }
  }

  @Test
  void aShapingItemReportsItsOwnWait() throws Exception {
    ServiceClient c = start(true);
    String body = "{\"items\":[{\"rule\":\"shaped\",\"key\":\"k\"}],\"atMicros\":" + T + "}";
    JsonNode first = ServiceClient.json(c.post("/v1/acquire", body));
    assertThat(first.get("items").get(0).has("waitMs")).as("no wait, no field").isFalse();
    JsonNode second = ServiceClient.json(c.post("/v1/acquire", body));
    assertThat(second.get("waitMs").asLong()).isEqualTo(500);
    assertThat(second.get("items").get(0).get("waitMs").asLong()).isEqualTo(500);
  }
}
