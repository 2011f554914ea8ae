package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.spi.Store;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The service's answers as RFC 9457 problems, for a client whose {@code Accept} prefers
 * {@code application/problem+json}: denials with the IETF draft's problem types, the API's other
 * errors as {@code about:blank} problems; other clients get the API's JSON as before. Subclasses
 * choose the store and how to take it down.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractProblemBodyTest {
  static final String RULES = """
      limits:
        - name: login
          config:
            - limit: 5
              period: 3s
        - name: boxed
          ban: {after: 2, within: 1m, for: 15m}
          config:
            - limit: 1
              period: 1h
        - name: strict
          failure_mode: closed
          config:
            - limit: 10
              period: 1h
      """;
  static final String PROBLEM = "application/problem+json";

  private Path dir;
  private SluiceService service;
  private ServiceClient client;

  /** A new, empty store. */
  protected abstract Store newStore() throws Exception;

  /** Takes the store down (every call fails or times out), or brings it back. */
  protected abstract void storeDown(boolean down) throws Exception;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-problem");
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withStoreTimeout(Duration.ofMillis(300)).withDrainTimeout(Duration.ofSeconds(2)), newStore());
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

  private HttpResponse<String> acquire(String rule, String key, String... headers) throws Exception {
    return client.post("/v1/acquire", "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\"}", headers);
  }

  @Test
  void theSixthCallOfAFivePerThreeSecondsRuleIsAQuotaExceededProblemWithTheHeaders() throws Exception {
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> allowed = acquire("login", "user:1", "accept", PROBLEM);
      // An allowed request is answered as it always is, whatever it accepts.
      assertThat(allowed.statusCode()).isEqualTo(200);
      assertThat(allowed.headers().firstValue("content-type")).hasValue("application/json; charset=utf-8");
      assertThat(ServiceClient.json(allowed).get("allowed").asBoolean()).isTrue();
    }
    HttpResponse<String> r = acquire("login", "user:1", "accept", PROBLEM);
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("content-type")).hasValue(PROBLEM);
    assertThat(r.headers().firstValue("ratelimit-policy")).hasValue("\"login.3s\";q=5;w=3");
    assertThat(r.headers().firstValue("ratelimit").orElseThrow()).matches("\"login\\.3s\";r=0;t=[1-3]");
    assertThat(r.headers().firstValue("retry-after").orElseThrow()).matches("[1-3]");
    JsonNode p = ServiceClient.json(r);
    assertThat(p.get("type").asText()).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
    assertThat(p.get("title").asText()).isEqualTo("Request cannot be satisfied as assigned quota has been exceeded");
    assertThat(p.get("status").asInt()).isEqualTo(429);
    assertThat(p.get("detail").asText()).isEqualTo("login.3s: 5 per 3s exceeded");
    assertThat(p.get("violated-policies")).hasSize(1);
    assertThat(p.get("violated-policies").get(0).asText()).isEqualTo("login.3s");
    // The decision rides along, as the API's JSON gives it.
    JsonNode d = p.get("decision");
    assertThat(d.get("allowed").asBoolean()).isFalse();
    assertThat(d.get("items").get(0).get("reason").asText()).isEqualTo("limit_exceeded");
    assertThat(d.get("items").get(0).get("key").asText()).isEqualTo("user:1");
    assertThat(d.get("items").get(0).get("windows").get(0).get("remaining").asLong()).isZero();
    assertThat(r.body()).doesNotContain("\n");
  }

  @Test
  void withoutAnAcceptForProblemsADenialIsTheDecisionAsBefore() throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(acquire("login", "user:2").statusCode()).isEqualTo(200);
    }
    for (String[] accept : new String[][] {{}, {"accept", "*/*"}, {"accept", "application/json"},
        {"accept", "application/json, application/problem+json"},
        {"accept", "application/problem+json;q=0.5, application/json"},
        {"accept", "application/problem+json;q=0"}}) {
      HttpResponse<String> r = acquire("login", "user:2", accept);
      assertThat(r.statusCode()).as(String.join(": ", accept)).isEqualTo(429);
      assertThat(r.headers().firstValue("content-type")).hasValue("application/json; charset=utf-8");
      assertThat(r.headers().firstValue("retry-after")).isPresent();
      JsonNode d = ServiceClient.json(r);
      assertThat(d.get("allowed").asBoolean()).isFalse();
      assertThat(d.has("type")).isFalse();
    }
  }

  @Test
  void anAcceptThatRanksProblemsAboveJsonGetsTheProblem() throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(acquire("login", "user:3").statusCode()).isEqualTo(200);
    }
    for (String accept : new String[] {"application/json;q=0.5, application/problem+json",
        "application/problem+json, */*;q=0.1", "application/problem+json, */*", "APPLICATION/PROBLEM+JSON"}) {
      HttpResponse<String> r = acquire("login", "user:3", "accept", accept);
      assertThat(r.statusCode()).as(accept).isEqualTo(429);
      assertThat(r.headers().firstValue("content-type")).as(accept).hasValue(PROBLEM);
    }
  }

  @Test
  void aBannedKeyIsAnAbnormalUsageProblem() throws Exception {
    assertThat(acquire("boxed", "ip:10.0.0.9").statusCode()).isEqualTo(200);
    // Two denials within the minute start the ban; the next request meets it.
    assertThat(acquire("boxed", "ip:10.0.0.9").statusCode()).isEqualTo(429);
    assertThat(acquire("boxed", "ip:10.0.0.9").statusCode()).isEqualTo(429);
    HttpResponse<String> r = acquire("boxed", "ip:10.0.0.9", "accept", PROBLEM);
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("content-type")).hasValue(PROBLEM);
    assertThat(Long.parseLong(r.headers().firstValue("retry-after").orElseThrow())).isBetween(1L, 900L);
    JsonNode p = ServiceClient.json(r);
    assertThat(p.get("type").asText())
        .isEqualTo("https://iana.org/assignments/http-problem-types#abnormal-usage-detected");
    assertThat(p.get("status").asInt()).isEqualTo(429);
    assertThat(p.get("detail").asText()).isEqualTo("boxed: banned");
    assertThat(p.get("violated-policies").get(0).asText()).isEqualTo("boxed");
    assertThat(p.get("decision").get("items").get(0).get("reason").asText()).isEqualTo("banned");
  }

  @Test
  void aStoreThatFailedClosedIsATemporaryReducedCapacityProblemWith503() throws Exception {
    storeDown(true);
    try {
      HttpResponse<String> r = acquire("strict", "k", "accept", PROBLEM);
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("content-type")).hasValue(PROBLEM);
      JsonNode p = ServiceClient.json(r);
      assertThat(p.get("type").asText())
          .isEqualTo("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
      assertThat(p.get("status").asInt()).isEqualTo(503);
      assertThat(p.get("violated-policies")).isEmpty();
      assertThat(p.get("decision").get("items").get(0).get("reason").asText()).isEqualTo("store_unavailable");
      // Without the Accept header the same denial is the decision, with 429 as always.
      HttpResponse<String> plain = acquire("strict", "k");
      assertThat(plain.statusCode()).isEqualTo(429);
      assertThat(ServiceClient.json(plain).get("items").get(0).get("reason").asText())
          .isEqualTo("store_unavailable");
    } finally {
      storeDown(false);
    }
  }

  @Test
  void theApisOtherErrorsAreAboutBlankProblemsThatKeepTheirCode() throws Exception {
    HttpResponse<String> bad = client.post("/v1/acquire", "{\"rule\":\"login\"}", "accept", PROBLEM);
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.headers().firstValue("content-type")).hasValue(PROBLEM);
    JsonNode p = ServiceClient.json(bad);
    assertThat(p.get("type").asText()).isEqualTo("about:blank");
    assertThat(p.get("title").asText()).isEqualTo("Bad Request");
    assertThat(p.get("status").asInt()).isEqualTo(400);
    assertThat(p.get("code").asText()).isEqualTo("invalid_request");
    assertThat(p.get("detail").asText()).contains("'key'");

    HttpResponse<String> unknown = client.post("/v1/acquire", "{\"rule\":\"nope\",\"key\":\"k\"}", "accept", PROBLEM);
    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(ServiceClient.json(unknown).get("code").asText()).isEqualTo("unknown_rule");
    assertThat(ServiceClient.json(unknown).get("detail").asText()).isEqualTo("unknown rule 'nope'");

    HttpResponse<String> missing = client.get("/v1/nothing-here", "accept", PROBLEM);
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.headers().firstValue("content-type")).hasValue(PROBLEM);
    assertThat(ServiceClient.json(missing).get("code").asText()).isEqualTo("not_found");
    assertThat(ServiceClient.json(missing).get("title").asText()).isEqualTo("Not Found");

    HttpResponse<String> method = client.get("/v1/acquire", "accept", PROBLEM);
    assertThat(method.statusCode()).isEqualTo(405);
    assertThat(ServiceClient.json(method).get("code").asText()).isEqualTo("method_not_allowed");

    // The same errors without the header keep the API's JSON.
    HttpResponse<String> plain = client.post("/v1/acquire", "{\"rule\":\"login\"}");
    assertThat(plain.statusCode()).isEqualTo(400);
    assertThat(plain.headers().firstValue("content-type")).hasValue("application/json; charset=utf-8");
    assertThat(ServiceClient.json(plain).get("error").get("code").asText()).isEqualTo("invalid_request");
    assertThat(ServiceClient.json(client.get("/v1/nothing-here")).get("error").get("code").asText())
        .isEqualTo("not_found");
  }

  @Test
  void answersThatAreNotErrorsAreTheSameForAClientThatPrefersProblems() throws Exception {
    HttpResponse<String> health = client.get("/healthz", "accept", PROBLEM);
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).isEqualTo("{\"status\":\"ok\"}");
    HttpResponse<String> rules = client.get("/v1/rules", "accept", PROBLEM);
    assertThat(rules.statusCode()).isEqualTo(200);
    assertThat(ServiceClient.json(rules).get("rules")).hasSize(3);
  }
}
