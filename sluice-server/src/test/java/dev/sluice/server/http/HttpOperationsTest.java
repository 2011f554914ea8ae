package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.ConfigReloader;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code POST /v1/acquire} by operation, its errors, and the operations {@code GET /v1/rules} lists. */
class HttpOperationsTest {
  static final String CONFIG = """
      limits:
        - name: per_user
          config: [{limit: 2, period: 60}]
        - name: anonymous
          config: [{limit: 1, period: 60}]
        - name: per_ip
          config: [{limit: 5, period: 60}]
        - name: global
          config: [{limit: 100, period: 60}]
        - name: login
          config: [{limit: 5, period: 60}]
          ban: {after: 3, within: 1m, for: 15m}
          audit: {keep: 4, attribute: ip}
          allow: ["ip:10.0.0.0/8"]
          deny: ["ip:203.0.113.0/24"]
      tiers:
        premium: [{limit: 50, period: 60}]
      attributes:
        ip: {type: ip, group: /24, group6: /64}
      operations:
        - name: auth.createToken
          items:
            - {rule: per_user,  key: "user:{user}", when: user}
            - {rule: anonymous, key: "ip:{ip}",     unless: user}
            - {rule: per_ip,    key: "ip:{ip}"}
            - {rule: global,    key: "all"}
      """;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  @TempDir
  Path dir;
  private RateLimiter limiter;
  private SluiceServer server;

  @BeforeEach
  void start() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), CONFIG);
    limiter = Sluice.builder().maxKeyBytes(24).build();
    ConfigReloader config = new ConfigReloader(dir, limiter, (ok, c, error) -> {}, Clock.systemUTC());
    server = SluiceServer.builder().limiter(limiter).config(config).prometheus(
        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).port(0).build().start();
  }

  @AfterEach
  void stop() {
    server.close();
    limiter.close();
  }

  private HttpResponse<String> post(String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/acquire"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static List<String> items(JsonNode decision) {
    List<String> out = new ArrayList<>();
    decision.get("items").forEach(i -> out.add(i.get("rule").asText() + "=" + i.get("key").asText()));
    return out;
  }

  /** What is left of each rule's key that the operation touches, read with a peek (cost 0). */
  private List<Long> remaining() throws Exception {
    HttpResponse<String> r = post("{\"items\":[{\"rule\":\"per_user\",\"key\":\"user:42\",\"cost\":0},"
        + "{\"rule\":\"anonymous\",\"key\":\"ip:10.0.0.0/24\",\"cost\":0},"
        + "{\"rule\":\"per_ip\",\"key\":\"ip:10.0.0.0/24\",\"cost\":0},{\"rule\":\"global\",\"key\":\"all\",\"cost\":0}]}");
    List<Long> out = new ArrayList<>();
    JSON.readTree(r.body()).get("items").forEach(i -> out.add(i.get("windows").get(0).get("remaining").asLong()));
    return out;
  }

  @Test
  void anOperationIsDecidedAsItsItemsWithTheSameBodyAndHeaders() throws Exception {
    HttpResponse<String> known = post("{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\","
        + "\"ip\":\"10.0.0.7\"}}");
    assertThat(known.statusCode()).isEqualTo(200);
    assertThat(items(JSON.readTree(known.body())))
        .containsExactly("per_user=user:42", "per_ip=ip:10.0.0.0/24", "global=all");
    assertThat(known.headers().firstValue("RateLimit-Policy")).isPresent();

    HttpResponse<String> anonymous = post("{\"operation\":\"auth.createToken\",\"attributes\":{\"ip\":\"10.0.0.8\"}}");
    assertThat(anonymous.statusCode()).isEqualTo(200);
    assertThat(items(JSON.readTree(anonymous.body())))
        .containsExactly("anonymous=ip:10.0.0.0/24", "per_ip=ip:10.0.0.0/24", "global=all");
    // Another host of the same /24 shares the anonymous limit of 1.
    HttpResponse<String> denied = post("{\"operation\":\"auth.createToken\",\"attributes\":{\"ip\":\"10.0.0.9\"}}");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    assertThat(remaining()).containsExactly(1L, 0L, 3L, 98L);
  }

  @Test
  void theRequestsCostMultipliesTheOperationsCosts() throws Exception {
    HttpResponse<String> r = post("{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\","
        + "\"ip\":\"10.0.0.7\"},\"cost\":2}");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(remaining()).containsExactly(0L, 1L, 3L, 98L);
  }

  @Test
  void badOperationRequestsAre400sNamingTheFieldAndConsumeNothing() throws Exception {
    String[][] cases = {
        {"{\"operation\":\"nope\",\"attributes\":{\"ip\":\"10.0.0.1\"}}", "unknown_operation",
            "unknown operation 'nope'"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\"}}", "missing_attribute",
            "'attributes.ip' is required: operation 'auth.createToken' needs it for the key of rule 'per_ip'"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":{\"ip\":\"10.1\"}}", "invalid_attribute",
            "'attributes.ip' must be an IPv4 or IPv6 address (such as 192.0.2.1 or 2001:db8::1), was '10.1'"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\",\"ip\":\"fe80::1%eth0\"}}",
            "invalid_attribute",
            "'attributes.ip' must be an IPv4 or IPv6 address (such as 192.0.2.1 or 2001:db8::1), was 'fe80::1%eth0'"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":42,\"ip\":\"10.0.0.1\"}}", "invalid_attribute",
            "'attributes.user' must be a string, was an integer (leave an attribute out when it has no value)"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"\",\"ip\":\"10.0.0.1\"}}", "invalid_attribute",
            "'attributes.user' must not be empty (leave an attribute out when it has no value)"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":[\"ip\"]}", "invalid_attribute",
            "'attributes' must be an object of names to strings, was an array"},
        {"{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"12345678901234567890\",\"ip\":\"10.0.0.1\"}}",
            "invalid_key",
            "the key of rule 'per_user' made from 'attributes' is 25 bytes of UTF-8; the maximum is 24"},
        {"{\"operation\":\"auth.createToken\",\"cost\":-1,\"attributes\":{\"ip\":\"10.0.0.1\"}}", "invalid_cost",
            "'cost' must be >= 0, was -1"},
        {"{\"operation\":\"auth.createToken\",\"rule\":\"global\",\"attributes\":{\"ip\":\"10.0.0.1\"}}",
            "invalid_request", "unknown field 'rule'; expected attributes, cost, operation"},
        {"{\"operation\":7}", "invalid_request", "'operation' must be a string, was an integer"},
    };
    for (String[] c : cases) {
      HttpResponse<String> r = post(c[0]);
      assertThat(r.statusCode()).as(c[0]).isEqualTo(400);
      JsonNode e = JSON.readTree(r.body()).get("error");
      assertThat(e.get("code").asText()).as(c[0]).isEqualTo(c[1]);
      assertThat(e.get("message").asText()).as(c[0]).isEqualTo(c[2]);
    }
    StringBuilder many = new StringBuilder("{\"operation\":\"auth.createToken\",\"attributes\":{");
    for (int i = 0; i < 33; i++) {
      many.append(i == 0 ? "" : ",").append("\"a").append(i).append("\":\"v\"");
    }
    HttpResponse<String> r = post(many.append("}}").toString());
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(r.body()).get("error").get("message").asText())
        .isEqualTo("'attributes' holds 33 attributes; the maximum is 32");
    assertThat(remaining()).containsExactly(2L, 1L, 5L, 100L);
  }

  @Test
  void rulesListTheOperationsAndTheAttributesTheyRead() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + "/v1/rules")).build(), HttpResponse.BodyHandlers.ofString());
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("attributes").toString())
        .isEqualTo("[{\"name\":\"ip\",\"type\":\"ip\",\"group\":\"/24\",\"group6\":\"/64\"}]");
    JsonNode op = body.get("operations").get(0);
    assertThat(op.get("name").asText()).isEqualTo("auth.createToken");
    assertThat(op.get("items").get(0).toString())
        .isEqualTo("{\"rule\":\"per_user\",\"key\":\"user:{user}\",\"when\":\"user\",\"cost\":1}");
    assertThat(op.get("items").get(1).get("unless").asText()).isEqualTo("user");
  }

  @Test
  void rulesListTiersBansAuditsAndConfiguredLists() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
        + "/v1/rules")).build(), HttpResponse.BodyHandlers.ofString());
    JsonNode body = JSON.readTree(r.body());
    assertThat(body.get("tiers").toString())
        .isEqualTo("{\"premium\":{\"windows\":[{\"limit\":50,\"periodMs\":60000}]}}");
    JsonNode login = body.get("rules").get(4);
    assertThat(login.get("name").asText()).isEqualTo("login");
    assertThat(login.get("ban").toString()).isEqualTo("{\"after\":3,\"withinMs\":60000,\"forMs\":900000}");
    assertThat(login.get("audit").toString()).isEqualTo("{\"keep\":4,\"attribute\":\"ip\"}");
    assertThat(login.get("allow").toString()).isEqualTo("[\"ip:10.0.0.0/8\"]");
    assertThat(login.get("deny").toString()).isEqualTo("[\"ip:203.0.113.0/24\"]");
    assertThat(body.get("rules").get(0).has("ban")).isFalse();
    assertThat(body.get("rules").get(0).has("allow")).isFalse();
  }
}
