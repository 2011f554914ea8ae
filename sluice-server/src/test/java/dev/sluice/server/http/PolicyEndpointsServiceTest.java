package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.RateLimiter;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The policy endpoints on a running service over the memory store, end to end: what they set is
 * what decisions apply. Each test uses keys of its own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PolicyEndpointsServiceTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "adm-7c1f";
  private RunningService api;

  @BeforeAll
  void start() throws Exception {
    api = new RunningService(TOKEN);
  }

  @AfterAll
  void stop() throws Exception {
    api.close();
  }

  /** Whether the limiter keeps policies: until the engine's side is in, the tests that need them are skipped. */
  static boolean keepsPolicies(RateLimiter limiter) {
    try {
      limiter.policies();
      return true;
    } catch (UnsupportedOperationException e) {
      return false;
    }
  }

  private HttpResponse<String> admin(String method, String path, String body) throws Exception {
    return api.sendWithHeaders(method, path, body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8),
        "authorization", "Bearer " + TOKEN);
  }

  private JsonNode acquire(String rule, String key) throws Exception {
    return JSON.readTree(api.post("/v1/acquire", "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\"}").body());
  }

  @Test
  void everyPolicyEndpointAnswers401WithoutTheTokenAndNothingChanges() throws Exception {
    for (String[] e : PolicyApiMappingTest.ENDPOINTS) {
      String path = e[1].replace("/api/", "/api.call/").replace("rule=api", "rule=api.call");
      byte[] body = e[2] == null ? new byte[0] : e[2].replace("{\"tier\":\"premium\"}",
          "{\"windows\":[{\"limit\":1,\"period\":\"1h\"}]}").getBytes(StandardCharsets.UTF_8);
      for (String[] headers : new String[][] {{}, {"authorization", "Bearer nope"}}) {
        HttpResponse<String> r = api.sendWithHeaders(e[0], path, body, headers);
        assertThat(r.statusCode()).as("%s %s: %s", e[0], path, r.body()).isEqualTo(401);
        assertThat(r.body()).contains("\"unauthorized\"").doesNotContain(TOKEN);
      }
    }
    assertThat(acquire("api.call", "k").get("items").get(0).get("windows").get(0).get("limit").asLong())
        .isEqualTo(1_000_000);
  }

  @Test
  void bodiesAreBoundedAndReadAsSent() throws Exception {
    String big = "{\"windows\":[{\"limit\":1,\"period\":\"" + "1".repeat(70_000) + "s\"}]}";
    HttpResponse<String> large = admin("PUT", "/v1/limits/api.call/k", big);
    assertThat(large.statusCode()).isEqualTo(400);
    assertThat(large.body()).contains("\"body_too_large\"");
    HttpResponse<String> gzip = api.sendWithHeaders("PUT", "/v1/limits/api.call/k",
        "{\"windows\":[{\"limit\":1,\"period\":\"1h\"}]}".getBytes(StandardCharsets.UTF_8),
        "authorization", "Bearer " + TOKEN, "content-encoding", "br");
    assertThat(gzip.statusCode()).isEqualTo(415);
    assertThat(gzip.body()).contains("\"unsupported_encoding\"");
  }

  @Test
  void aLiveLimitSetOverHttpIsTheOneDecisionsApply() throws Exception {
    assumeTrue(keepsPolicies(api.service.limiter()), "the limiter keeps no policies yet");
    HttpResponse<String> put = admin("PUT", "/v1/limits/api.call/user:42",
        "{\"windows\":[{\"limit\":2,\"period\":\"1h\"}]}");
    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
    JsonNode d = acquire("api.call", "user:42");
    assertThat(d.get("items").get(0).get("windows").get(0).get("limit").asLong()).isEqualTo(2);
    assertThat(admin("DELETE", "/v1/limits/api.call/user:42", null).statusCode()).isEqualTo(204);
    assertThat(acquire("api.call", "user:42").get("items").get(0).get("windows").get(0).get("limit").asLong())
        .isEqualTo(1_000_000);
  }

  @Test
  void keysWithColonsAndSlashesAreTheKeysDecisionsName() throws Exception {
    assumeTrue(keepsPolicies(api.service.limiter()), "the limiter keeps no policies yet");
    String body = "{\"windows\":[{\"limit\":3,\"period\":\"1h\"}]}";
    assertThat(admin("PUT", "/v1/limits/api.call/ip:2001:db8::1", body).statusCode()).isEqualTo(200);
    assertThat(admin("PUT", "/v1/limits/api.call/path%2Fto", body).statusCode()).isEqualTo(200);
    assertThat(acquire("api.call", "ip:2001:db8::1").get("items").get(0).get("windows").get(0).get("limit").asLong())
        .isEqualTo(3);
    assertThat(acquire("api.call", "path/to").get("items").get(0).get("windows").get(0).get("limit").asLong())
        .isEqualTo(3);
    JsonNode got = JSON.readTree(admin("GET", "/v1/limits/api.call/path%2Fto", null).body());
    assertThat(got.get("key").asText()).isEqualTo("path/to");
    JsonNode list = JSON.readTree(admin("GET", "/v1/limits?rule=api.call", null).body());
    assertThat(list.get("items")).extracting(n -> n.get("key").asText()).contains("ip:2001:db8::1", "path/to");
  }

  @Test
  void aBannedKeyIsDeniedAsBannedWithRetryAfterUntilTheBanIsLifted() throws Exception {
    assumeTrue(keepsPolicies(api.service.limiter()), "the limiter keeps no policies yet");
    HttpResponse<String> put = admin("PUT", "/v1/bans/api.call/ip:10.0.0.7", "{\"for\":\"10m\"}");
    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
    HttpResponse<String> denied = api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"ip:10.0.0.7\"}");
    assertThat(denied.statusCode()).isEqualTo(429);
    JsonNode item = JSON.readTree(denied.body()).get("items").get(0);
    assertThat(item.get("reason").asText()).isEqualTo("banned");
    assertThat(item.get("blockedMs").asLong()).isBetween(1L, 600_000L);
    assertThat(Long.parseLong(denied.headers().firstValue("retry-after").orElseThrow())).isBetween(1L, 600L);
    assertThat(JSON.readTree(admin("GET", "/v1/bans/api.call/ip:10.0.0.7", null).body()).get("automatic").asBoolean())
        .isFalse();
    assertThat(admin("DELETE", "/v1/bans/api.call/ip:10.0.0.7", null).statusCode()).isEqualTo(204);
    assertThat(api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"ip:10.0.0.7\"}").statusCode()).isEqualTo(200);
  }

  @Test
  void aDenyListedRangeDeniesItsAddressesWithoutRetryAfter() throws Exception {
    assumeTrue(keepsPolicies(api.service.limiter()), "the limiter keeps no policies yet");
    assertThat(admin("PUT", "/v1/lists/deny/api.call/ip:10.9.0.0%2F16", null).statusCode()).isEqualTo(200);
    HttpResponse<String> denied = api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"ip:10.9.3.4\"}");
    assertThat(denied.statusCode()).isEqualTo(429);
    JsonNode d = JSON.readTree(denied.body());
    assertThat(d.get("items").get(0).get("reason").asText()).isEqualTo("deny_listed");
    assertThat(d.get("retryAfterMs").asLong()).isEqualTo(-1);
    assertThat(denied.headers().firstValue("retry-after")).isEmpty();
    JsonNode list = JSON.readTree(admin("GET", "/v1/lists/deny/api.call", null).body());
    assertThat(list.get("items")).extracting(JsonNode::asText).contains("ip:10.9.0.0/16");
    // Every rule's deny list, as {rule, entry}; the allow list holds none of it.
    JsonNode every = JSON.readTree(admin("GET", "/v1/lists/deny?count=1000", null).body());
    assertThat(every.get("items")).extracting(e -> e.get("rule").asText() + " " + e.get("entry").asText())
        .contains("api.call ip:10.9.0.0/16");
    JsonNode allow = JSON.readTree(admin("GET", "/v1/lists/allow?count=1000", null).body());
    assertThat(allow.get("items")).extracting(e -> e.get("entry").asText()).doesNotContain("ip:10.9.0.0/16");
    assertThat(admin("DELETE", "/v1/lists/deny/api.call/ip:10.9.0.0%2F16", null).statusCode()).isEqualTo(204);
    assertThat(api.post("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"ip:10.9.3.4\"}").statusCode()).isEqualTo(200);
  }

  @Test
  void badInputIsA400NamingTheFieldAndChangesNothing() throws Exception {
    assumeTrue(keepsPolicies(api.service.limiter()), "the limiter keeps no policies yet");
    String[][] bad = {
        {"PUT", "/v1/limits/api.call/bad:1", "{\"windows\":[{\"limit\":1,\"period\":\"1m\"},{\"limit\":2,\"period\":\"x\"}]}",
            "invalid_limit", "windows[1].period"},
        {"PUT", "/v1/limits/api.call/bad:1", "{\"tier\":\"gold\"}", "unknown_tier", "gold"},
        {"PUT", "/v1/limits/nope/bad:1", "{\"windows\":[{\"limit\":1,\"period\":\"1m\"}]}", "unknown_rule", "nope"},
        {"PUT", "/v1/bans/api.call/bad:1", "{\"until\":\"2001-01-01T00:00:00Z\"}", "invalid_expiry", "past"},
        {"PUT", "/v1/lists/deny/api.call/ip:10.0.0.0%2F99", null, "invalid_entry", ""},
        {"GET", "/v1/limits?count=0", null, "invalid_page", "count"}};
    for (String[] b : bad) {
      HttpResponse<String> r = admin(b[0], b[1], b[2]);
      assertThat(r.statusCode()).as("%s %s: %s", b[0], b[1], r.body()).isEqualTo(400);
      JsonNode e = JSON.readTree(r.body()).get("error");
      assertThat(e.get("code").asText()).as(r.body()).isEqualTo(b[3]);
      assertThat(e.get("message").asText()).as(r.body()).contains(b[4]);
      assertThat(ClientMessages.namesInternals(e.get("message").asText())).as(r.body()).isFalse();
    }
    assertThat(admin("GET", "/v1/limits/api.call/bad:1", null).statusCode()).isEqualTo(404);
    assertThat(admin("GET", "/v1/bans/api.call/bad:1", null).statusCode()).isEqualTo(404);
    JsonNode deny = JSON.readTree(admin("GET", "/v1/lists/deny/api.call", null).body());
    assertThat(deny.get("items")).extracting(JsonNode::asText).doesNotContain("ip:10.0.0.0/99");
  }
}
