package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * SPEC §2 and §7 promises about the numbers an HTTP answer carries, on a service whose memory
 * store runs on a fake clock, so that every retry and every header value is exact.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpDecisionPromisesTest {
  private static final String RULES = """
      limits:
        - name: once
          config:
            - limit: 1
              period: 10s
        - name: pair
          config:
            - limit: 2
              period: 1m
            - limit: 1
              period: 5s
      """;

  private final FakeTicker clock = new FakeTicker(1_800_000_000_000_000L);
  private Path dir;
  private SluiceService service;
  private ServiceClient client;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-http-promises");
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
            .withDrainTimeout(Duration.ofMillis(200)),
        MemoryStore.builder().ticker(clock).build());
    client = new ServiceClient(service.port());
  }

  @AfterAll
  void stop() throws Exception {
    if (service != null) {
      service.close();
    }
    Files.deleteIfExists(dir.resolve("limits.yaml"));
    Files.deleteIfExists(dir);
  }

  private HttpResponse<String> acquire(String body) throws Exception {
    return client.post("/v1/acquire", body);
  }

  private long remaining(String rule, String key, int window) throws Exception {
    JsonNode d = ServiceClient.json(acquire("{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\",\"cost\":0}"));
    return d.get("items").get(0).get("windows").get(window).get("remaining").asLong();
  }

  @Test
  void aCostLargerThanAWindowsLimitIsA429NamingThatReasonWithoutRetryAfterAndConsumesNothing() throws Exception {
    HttpResponse<String> r = acquire("{\"rule\":\"pair\",\"key\":\"big\",\"cost\":2}");
    assertThat(r.statusCode()).isEqualTo(429);
    JsonNode d = ServiceClient.json(r);
    assertThat(d.get("allowed").asBoolean()).isFalse();
    assertThat(d.get("retryAfterMs").asLong()).as("never: the cost can never fit").isEqualTo(-1);
    JsonNode item = d.get("items").get(0);
    assertThat(item.get("reason").asText()).isEqualTo("cost_exceeds_limit");
    JsonNode minute = item.get("windows").get(0);
    JsonNode fiveSeconds = item.get("windows").get(1);
    assertThat(minute.get("exceeded").asBoolean()).isFalse();
    assertThat(minute.get("retryAfterMs").asLong()).isZero();
    assertThat(fiveSeconds.get("exceeded").asBoolean()).isTrue();
    assertThat(fiveSeconds.get("retryAfterMs").asLong()).isEqualTo(-1);
    // Waiting would not help, so no Retry-After is given.
    assertThat(r.headers().firstValue("retry-after")).isEmpty();
    assertThat(remaining("pair", "big", 0)).isEqualTo(2);
    assertThat(remaining("pair", "big", 1)).isEqualTo(1);
  }

  @Test
  void retryAfterIsTheRetryInWholeSecondsRoundedUp() throws Exception {
    String body = "{\"rule\":\"once\",\"key\":\"ceil\"}";
    assertThat(acquire(body).statusCode()).isEqualTo(200);
    long[][] cases = {{8_999, 1_001, 2}, {1, 1_000, 1}, {1, 999, 1}, {998, 1, 1}};
    for (long[] c : cases) {
      clock.advanceMillis(c[0]);
      HttpResponse<String> r = acquire(body);
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(ServiceClient.json(r).get("retryAfterMs").asLong()).isEqualTo(c[1]);
      assertThat(r.headers().firstValue("retry-after")).as("retryAfterMs %d", c[1]).hasValue(Long.toString(c[2]));
    }
    clock.advanceMillis(1);
    HttpResponse<String> again = acquire(body);
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.headers().firstValue("retry-after")).isEmpty();
  }

  @Test
  void theRequestsRetryAfterIsTheLargestOverItsDenyingWindowsAndZeroWhenAllowed() throws Exception {
    String body = "{\"items\":[{\"rule\":\"once\",\"key\":\"max\"},{\"rule\":\"pair\",\"key\":\"max\"}]}";
    HttpResponse<String> first = acquire(body);
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(ServiceClient.json(first).get("retryAfterMs").asLong()).isZero();

    clock.advanceMillis(1_000);
    HttpResponse<String> r = acquire(body);
    assertThat(r.statusCode()).isEqualTo(429);
    JsonNode d = ServiceClient.json(r);
    JsonNode once = d.get("items").get(0).get("windows").get(0);
    JsonNode pairFive = d.get("items").get(1).get("windows").get(1);
    assertThat(once.get("retryAfterMs").asLong()).isEqualTo(9_000);
    assertThat(pairFive.get("retryAfterMs").asLong()).isEqualTo(4_000);
    assertThat(d.get("items").get(1).get("windows").get(0).get("exceeded").asBoolean()).isFalse();
    assertThat(d.get("retryAfterMs").asLong()).isEqualTo(9_000);
    assertThat(r.headers().firstValue("retry-after")).hasValue("9");
    // The minute window of "pair" was not charged for the denied request.
    assertThat(remaining("pair", "max", 0)).isEqualTo(1);
  }

  @Test
  void aBadItemAnywhereInAListIsA400AndTheItemsBeforeItAreNotConsumed() throws Exception {
    String good = "{\"rule\":\"once\",\"key\":\"first\"}";
    String[] bad = {
        "{\"rule\":\"nope\",\"key\":\"k\"}",
        "{\"rule\":\"pair\",\"key\":\"\"}",
        "{\"rule\":\"pair\",\"key\":\"" + "k".repeat(513) + "\"}",
        "{\"rule\":\"pair\",\"key\":\"a\\ud800\"}",
        "{\"rule\":\"pair\",\"key\":\"k\",\"cost\":-1}",
        "{\"rule\":\"pair\",\"key\":\"k\",\"cost\":1.5}",
        "{\"rule\":\"pair\",\"key\":\"k\",\"weight\":1}",
        "{\"rule\":\"pair\"}",
        "{\"rule\":\"once\",\"key\":\"first\",\"cost\":" + Long.MAX_VALUE + "}",
    };
    List<String> unexpected = new ArrayList<>();
    for (String b : bad) {
      HttpResponse<String> r = acquire("{\"items\":[" + good + "," + b + "]}");
      if (r.statusCode() != 400 || !ServiceClient.json(r).has("error")) {
        unexpected.add(b + " -> " + r.statusCode() + " " + r.body());
      }
    }
    assertThat(unexpected).isEmpty();
    assertThat(remaining("once", "first", 0)).isEqualTo(1);
    assertThat(acquire(good).statusCode()).isEqualTo(200);
  }
}
