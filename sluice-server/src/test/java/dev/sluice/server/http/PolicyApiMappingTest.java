package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import dev.sluice.policy.Ban;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Offender;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.StoreException;
import dev.sluice.Window;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP mapping of the policy endpoints over policies kept in maps: paths, bodies, status
 * codes and error codes, and that a refused request reaches nothing.
 */
class PolicyApiMappingTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant NOW = Instant.parse("2026-11-25T20:00:00Z");

  private final RuleSet rules = RuleSet.of(
          Rule.builder("api").window(10, Duration.ofMinutes(1)).build(),
          Rule.builder("login").window(5, Duration.ofMinutes(1)).build())
      .withTiers(Map.of("premium", List.of(Window.of(100, Duration.ofMinutes(1)))));
  private final MapPolicies policies = new MapPolicies(rules, Clock.fixed(NOW, ZoneOffset.UTC));
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private Server server;

  @BeforeEach
  void start() {
    server = serve(AdminGuard.of(null, InetAddress.getLoopbackAddress()));
  }

  @AfterEach
  void stop() {
    stop(server);
  }

  /**
   * Stops {@code s} without waiting for the end: its socket closes at once, and the rest is the
   * boss event loop's fixed 2-second quiet period (Netty's), which this Armeria cannot shorten and
   * which would add 2 seconds to every test here.
   */
  private static void stop(Server s) {
    s.stop();
  }

  private Server serve(AdminGuard guard) {
    ServerBuilder sb = Server.builder().http(new InetSocketAddress("127.0.0.1", 0)).gracefulShutdownTimeoutMillis(0, 0);
    new PolicyApi(policies, () -> rules, guard, Clock.fixed(NOW, ZoneOffset.UTC)).bind(sb, 4096,
        t -> HttpApi.error(new ApiException(503, "unavailable", "the request could not be decided; try again")));
    Server s = sb.build();
    s.start().join();
    return s;
  }

  private HttpResponse<String> send(Server s, String method, String path, String body, String... headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.activeLocalPort() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (headers.length > 0) {
      b.headers(headers);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> send(String method, String path, String body) throws Exception {
    return send(server, method, path, body);
  }

  private static JsonNode json(HttpResponse<String> r) throws IOException {
    return JSON.readTree(r.body());
  }

  /** Asserts a 400 with {@code code} whose message names {@code names}, and that nothing changed. */
  private void refused(String method, String path, String body, String code, String names) throws Exception {
    Map<String, Object> before = policies.snapshot();
    HttpResponse<String> r = send(method, path, body);
    assertThat(r.statusCode()).as("%s %s %s: %s", method, path, body, r.body()).isEqualTo(400);
    JsonNode e = json(r).get("error");
    assertThat(e.get("code").asText()).as(r.body()).isEqualTo(code);
    assertThat(e.get("message").asText()).as(r.body()).contains(names);
    assertThat(ClientMessages.namesInternals(e.get("message").asText())).as(r.body()).isFalse();
    assertThat(policies.snapshot()).isEqualTo(before);
  }

  @Test
  void aLiveLimitWithItsOwnWindowsIsSetReadListedAndRemoved() throws Exception {
    HttpResponse<String> put = send("PUT", "/v1/limits/api/user:42",
        "{\"windows\":[{\"limit\":10,\"period\":\"1m\"},{\"limit\":100,\"period\":\"PT1H\"}]}");
    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
    assertThat(json(put)).isEqualTo(JSON.readTree("""
        {"rule":"api","key":"user:42","windows":[{"limit":10,"period":"1m"},{"limit":100,"period":"1h"}]}"""));
    assertThat(policies.limits.get("api user:42").limit())
        .isEqualTo(LiveLimit.windows(List.of(Window.of(10, Duration.ofMinutes(1)), Window.of(100, Duration.ofHours(1)))));

    HttpResponse<String> get = send("GET", "/v1/limits/api/user:42", null);
    assertThat(get.statusCode()).isEqualTo(200);
    assertThat(json(get)).isEqualTo(json(put));

    HttpResponse<String> list = send("GET", "/v1/limits?rule=api", null);
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(json(list).get("items")).containsExactly(json(put));
    assertThat(json(list).get("next").isNull()).isTrue();

    assertThat(send("DELETE", "/v1/limits/api/user:42", null).statusCode()).isEqualTo(204);
    assertThat(policies.limits).isEmpty();
    HttpResponse<String> gone = send("GET", "/v1/limits/api/user:42", null);
    assertThat(gone.statusCode()).isEqualTo(404);
    assertThat(json(gone).get("error").get("code").asText()).isEqualTo("not_found");
    assertThat(send("DELETE", "/v1/limits/api/user:42", null).statusCode()).isEqualTo(404);
  }

  @Test
  void aLiveLimitNamingATierKeepsTheTierName() throws Exception {
    HttpResponse<String> put = send("PUT", "/v1/limits/api/user:7", "{\"tier\":\"premium\"}");
    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
    assertThat(json(put)).isEqualTo(JSON.readTree("{\"rule\":\"api\",\"key\":\"user:7\",\"tier\":\"premium\"}"));
    assertThat(policies.limits.get("api user:7").limit()).isEqualTo(LiveLimit.tier("premium"));
  }

  @Test
  void keysWithColonsAndEncodedSlashesArePercentDecodedOneSegmentAtATime() throws Exception {
    assertThat(send("PUT", "/v1/limits/api/ip:2001:db8::1", "{\"tier\":\"premium\"}").statusCode()).isEqualTo(200);
    assertThat(send("PUT", "/v1/limits/api/path%2Fto%2Fthing%20x", "{\"tier\":\"premium\"}").statusCode())
        .isEqualTo(200);
    assertThat(send("PUT", "/v1/limits/api/%C3%A9t%C3%A9+%25", "{\"tier\":\"premium\"}").statusCode()).isEqualTo(200);
    assertThat(policies.limits.keySet()).containsExactlyInAnyOrder("api ip:2001:db8::1", "api path/to/thing x",
        "api été+%");
    HttpResponse<String> get = send("GET", "/v1/limits/api/path%2Fto%2Fthing%20x", null);
    assertThat(json(get).get("key").asText()).isEqualTo("path/to/thing x");
    assertThat(send("DELETE", "/v1/limits/api/ip:2001:db8::1", null).statusCode()).isEqualTo(204);
  }

  @Test
  void aPathWithAnUnencodedSlashInTheKeyIsNotFoundAndSaysToWriteIt2F() throws Exception {
    HttpResponse<String> r = send("PUT", "/v1/limits/api/a/b", "{\"tier\":\"premium\"}");
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(json(r).get("error").get("message").asText()).contains("%2F");
    assertThat(policies.calls).isZero();
  }

  @Test
  void badPathEscapesAndEmptyKeysAreRefusedAsInvalidKeys() throws Exception {
    assertThat(catchThrowableOfType(() -> PolicyApi.percentDecoded("%zz"), ApiException.class).code)
        .isEqualTo("invalid_key");
    assertThat(catchThrowableOfType(() -> PolicyApi.percentDecoded("a%2"), ApiException.class).code)
        .isEqualTo("invalid_key");
    refused("PUT", "/v1/limits/api/%C3", "{\"tier\":\"premium\"}", "invalid_key", "UTF-8");
    refused("PUT", "/v1/limits/api/", "{\"tier\":\"premium\"}", "invalid_key", "'key'");
    refused("GET", "/v1/bans/api/", null, "invalid_key", "'key'");
    refused("PUT", "/v1/limits/api/" + "k".repeat(600), "{\"tier\":\"premium\"}", "invalid_key", "'key' is 600 bytes");
  }

  @Test
  void badLimitsAreRefusedNamingTheFieldAndChangeNothing() throws Exception {
    String p = "/v1/limits/api/user:1";
    refused("PUT", p, "{\"windows\":[{\"limit\":10,\"period\":\"1m\"},{\"limit\":5,\"period\":\"soon\"}]}",
        "invalid_limit", "windows[1].period");
    refused("PUT", p, "{\"windows\":[{\"limit\":10,\"period\":\"1m\"},{\"limit\":5,\"period\":\"-1s\"}]}",
        "invalid_limit", "windows[1].period");
    refused("PUT", p, "{\"windows\":[{\"limit\":10,\"period\":\"1m\"},{\"limit\":5,\"period\":60}]}",
        "invalid_limit", "windows[1].period");
    refused("PUT", p, "{\"windows\":[{\"limit\":10,\"period\":\"1m\"},{\"limit\":5,\"period\":\"60s\"}]}",
        "invalid_limit", "windows[1].period");
    refused("PUT", p, "{\"windows\":[{\"limit\":0,\"period\":\"1m\"}]}", "invalid_limit", "windows[0].limit");
    refused("PUT", p, "{\"windows\":[{\"limit\":1.5,\"period\":\"1m\"}]}", "invalid_limit", "windows[0].limit");
    refused("PUT", p, "{\"windows\":[{\"limit\":99999999999999999999,\"period\":\"1m\"}]}", "invalid_limit",
        "windows[0].limit");
    refused("PUT", p, "{\"windows\":[{\"period\":\"1m\"}]}", "invalid_limit", "windows[0].limit");
    refused("PUT", p, "{\"windows\":[{\"limit\":1,\"period\":\"1m\",\"burst\":3}]}", "invalid_limit",
        "windows[0].burst");
    refused("PUT", p, "{\"windows\":[]}", "invalid_limit", "'windows'");
    refused("PUT", p, "{\"windows\":{}}", "invalid_limit", "'windows'");
    refused("PUT", p, "{\"windows\":[1]}", "invalid_limit", "windows[0]");
    refused("PUT", p, "{\"tier\":\"premium\",\"windows\":[{\"limit\":1,\"period\":\"1m\"}]}", "invalid_limit", "tier");
    refused("PUT", p, "{}", "invalid_limit", "tier");
    refused("PUT", p, "{\"tier\":\"premium\",\"note\":\"x\"}", "invalid_limit", "unknown field 'note'");
    refused("PUT", p, "{\"tier\":3}", "invalid_limit", "'tier'");
    refused("PUT", p, "{\"tier\":\"gold\"}", "unknown_tier", "gold");
    refused("PUT", p, "[1]", "invalid_request", "object");
    refused("PUT", p, "{\"tier\":", "malformed_json", "not valid JSON");
    refused("PUT", p, "", "malformed_json", "empty");
    refused("PUT", "/v1/limits/nope/user:1", "{\"tier\":\"premium\"}", "unknown_rule", "'nope'");
    StringBuilder many = new StringBuilder("{\"windows\":[");
    for (int i = 0; i < 17; i++) {
      many.append(i == 0 ? "" : ",").append("{\"limit\":1,\"period\":\"").append(i + 1).append("s\"}");
    }
    refused("PUT", p, many + "]}", "invalid_limit", "1 to 16");
    assertThat(policies.calls).isZero();
  }

  @Test
  void aLimitThePoliciesRefuseIsAnInvalidLimitInTheirWords() throws Exception {
    policies.failure = new IllegalArgumentException("window period 10d is longer than the store keeps");
    refused("PUT", "/v1/limits/api/k", "{\"windows\":[{\"limit\":1,\"period\":\"10d\"}]}", "invalid_limit",
        "longer than the store keeps");
  }

  @Test
  void aStoreThatFailsIsA503AndAStoreWithoutPoliciesIsA503Unsupported() throws Exception {
    policies.failure = new StoreException("connection reset");
    HttpResponse<String> r = send("GET", "/v1/limits/api/k", null);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(json(r).get("error").get("code").asText()).isEqualTo("unavailable");
    assertThat(r.body()).doesNotContain("connection reset");

    policies.failure = new UnsupportedOperationException("memory keeps no policies");
    r = send("GET", "/v1/bans?rule=api", null);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(json(r).get("error").get("code").asText()).isEqualTo("unsupported");
  }

  @Test
  void listingsArePagedWithACursorAndBadPagesAreRefused() throws Exception {
    for (String k : List.of("a", "b", "c")) {
      policies.limits.put("api " + k, new KeyLimit("api", k, LiveLimit.tier("premium")));
    }
    policies.limits.put("login z", new KeyLimit("login", "z", LiveLimit.tier("premium")));
    JsonNode first = json(send("GET", "/v1/limits?rule=api&count=2", null));
    assertThat(first.get("items")).extracting(n -> n.get("key").asText()).containsExactly("a", "b");
    String next = first.get("next").asText();
    JsonNode second = json(send("GET", "/v1/limits?rule=api&count=2&after="
        + java.net.URLEncoder.encode(next, java.nio.charset.StandardCharsets.UTF_8), null));
    assertThat(second.get("items")).extracting(n -> n.get("key").asText()).containsExactly("c");
    assertThat(second.get("next").isNull()).isTrue();
    JsonNode all = json(send("GET", "/v1/limits", null));
    assertThat(all.get("items")).extracting(n -> n.get("rule").asText()).containsExactly("api", "api", "api", "login");

    refused("GET", "/v1/limits?count=0", null, "invalid_page", "'count'");
    refused("GET", "/v1/limits?count=1001", null, "invalid_page", "'count'");
    refused("GET", "/v1/limits?count=ten", null, "invalid_page", "'count'");
    refused("GET", "/v1/limits?count=99999999999999999999999", null, "invalid_page", "'count'");
    refused("GET", "/v1/bans?after=", null, "invalid_page", "'after'");
    refused("GET", "/v1/limits?rule=nope", null, "unknown_rule", "'nope'");
    refused("GET", "/v1/limits?page=2", null, "invalid_request", "'page'");
    refused("GET", "/v1/limits?count=1&count=2", null, "invalid_request", "'count'");
  }

  @Test
  void aBanIsSetForADurationOrUntilATimeReadListedAndLifted() throws Exception {
    HttpResponse<String> put = send("PUT", "/v1/bans/login/ip:10.0.0.1", "{\"for\":\"15m\"}");
    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
    assertThat(json(put)).isEqualTo(JSON.readTree("""
        {"rule":"login","key":"ip:10.0.0.1","until":"2026-11-25T20:15:00Z","automatic":false}"""));
    assertThat(policies.bans.get("login ip:10.0.0.1").untilMillis()).isEqualTo(NOW.plusSeconds(900).toEpochMilli());

    HttpResponse<String> until = send("PUT", "/v1/bans/login/ip:2001:db8::1", "{\"until\":\"2026-11-26T01:00:00+02:00\"}");
    assertThat(until.statusCode()).as(until.body()).isEqualTo(200);
    assertThat(json(until).get("until").asText()).isEqualTo("2026-11-25T23:00:00Z");

    policies.bans.put("login auto", new Ban("login", "auto", NOW.plusSeconds(60).toEpochMilli(), true));
    HttpResponse<String> get = send("GET", "/v1/bans/login/auto", null);
    assertThat(json(get).get("automatic").asBoolean()).isTrue();
    JsonNode list = json(send("GET", "/v1/bans?rule=login", null));
    assertThat(list.get("items")).extracting(n -> n.get("key").asText())
        .containsExactly("auto", "ip:10.0.0.1", "ip:2001:db8::1");

    assertThat(send("DELETE", "/v1/bans/login/ip:10.0.0.1", null).statusCode()).isEqualTo(204);
    assertThat(send("DELETE", "/v1/bans/login/ip:10.0.0.1", null).statusCode()).isEqualTo(404);
    assertThat(send("GET", "/v1/bans/login/ip:10.0.0.1", null).statusCode()).isEqualTo(404);
  }

  @Test
  void badBanExpiriesAreRefusedNamingTheFieldAndChangeNothing() throws Exception {
    String p = "/v1/bans/login/k";
    refused("PUT", p, "{\"until\":\"2026-11-25T19:59:59Z\"}", "invalid_expiry", "in the past");
    refused("PUT", p, "{\"until\":\"2026-11-25T20:00:00Z\"}", "invalid_expiry", "in the past");
    refused("PUT", p, "{\"until\":\"tomorrow\"}", "invalid_expiry", "'until'");
    refused("PUT", p, "{\"until\":\"2026-11-26T20:00:00\"}", "invalid_expiry", "'until'");
    refused("PUT", p, "{\"until\":1}", "invalid_expiry", "'until'");
    refused("PUT", p, "{\"until\":\"2040-01-01T00:00:00Z\"}", "invalid_expiry", "3650 days");
    refused("PUT", p, "{\"for\":\"0s\"}", "invalid_expiry", "'for'");
    refused("PUT", p, "{\"for\":\"-5m\"}", "invalid_expiry", "'for'");
    refused("PUT", p, "{\"for\":\"forever\"}", "invalid_expiry", "'for'");
    refused("PUT", p, "{\"for\":\"3651d\"}", "invalid_expiry", "'for'");
    refused("PUT", p, "{\"for\":\"1m\",\"until\":\"2026-11-26T00:00:00Z\"}", "invalid_expiry", "exactly one");
    refused("PUT", p, "{\"for\":\"1m\",\"reason\":\"abuse\"}", "invalid_expiry", "unknown field 'reason'");
    refused("PUT", "/v1/bans/nope/k", "{\"for\":\"1m\"}", "unknown_rule", "'nope'");
    assertThat(policies.calls).isZero();
  }

  @Test
  void listEntriesAreAddedListedAndRemovedAndBadEntriesRefused() throws Exception {
    HttpResponse<String> add = send("PUT", "/v1/lists/deny/login/ip:10.0.0.0%2F8", null);
    assertThat(add.statusCode()).as(add.body()).isEqualTo(200);
    assertThat(json(add)).isEqualTo(JSON.readTree("{\"list\":\"deny\",\"rule\":\"login\",\"entry\":\"ip:10.0.0.0/8\"}"));
    assertThat(send("PUT", "/v1/lists/deny/login/ip:2001:db8::%2F32", null).statusCode()).isEqualTo(200);
    assertThat(send("PUT", "/v1/lists/allow/login/user:admin*", null).statusCode()).isEqualTo(200);
    assertThat(policies.lists.get(ListKind.DENY).values()).containsExactly("ip:10.0.0.0/8", "ip:2001:db8::/32");

    JsonNode deny = json(send("GET", "/v1/lists/deny/login?count=1", null));
    assertThat(deny.get("items")).extracting(JsonNode::asText).containsExactly("ip:10.0.0.0/8");
    assertThat(deny.get("next").asText()).isEqualTo("ip:10.0.0.0/8");
    JsonNode allow = json(send("GET", "/v1/lists/allow/login", null));
    assertThat(allow.get("items")).extracting(JsonNode::asText).containsExactly("user:admin*");
    // Every rule's entries of a list, by rule then entry, paged by "<rule> <entry>".
    JsonNode first = json(send("GET", "/v1/lists/deny?count=1", null));
    assertThat(first).isEqualTo(JSON.readTree(
        "{\"items\":[{\"rule\":\"login\",\"entry\":\"ip:10.0.0.0/8\"}],\"next\":\"login ip:10.0.0.0/8\"}"));
    JsonNode second = json(send("GET", "/v1/lists/deny?count=1&after=login%20ip:10.0.0.0%2F8", null));
    assertThat(second.get("items").get(0).get("entry").asText()).isEqualTo("ip:2001:db8::/32");
    refused("GET", "/v1/lists/deny?rule=login", null, "invalid_request", "rule");
    assertThat(send("GET", "/v1/lists/grey", null).statusCode()).isEqualTo(404);

    assertThat(send("DELETE", "/v1/lists/deny/login/ip:10.0.0.0%2F8", null).statusCode()).isEqualTo(204);
    assertThat(send("DELETE", "/v1/lists/deny/login/ip:10.0.0.0%2F8", null).statusCode()).isEqualTo(404);

    refused("PUT", "/v1/lists/deny/login/ip:10.0.0.0%2Fx", null, "invalid_entry", "ip:10.0.0.0/x");
    refused("PUT", "/v1/lists/deny/login/", null, "invalid_entry", "empty");
    refused("PUT", "/v1/lists/deny/login/k", "{}", "invalid_request", "no body");
    refused("PUT", "/v1/lists/deny/nope/k", null, "unknown_rule", "'nope'");
    HttpResponse<String> kind = send("PUT", "/v1/lists/grey/login/k", null);
    assertThat(kind.statusCode()).isEqualTo(404);
    assertThat(json(kind).get("error").get("message").asText()).contains("allow").contains("deny");
  }

  @Test
  void auditAndTopOffendersAreAnsweredAsJson() throws Exception {
    policies.audit.put("login ip:10.0.0.1", List.of("u2", "u1"));
    HttpResponse<String> audit = send("GET", "/v1/audit/login/ip:10.0.0.1", null);
    assertThat(json(audit)).isEqualTo(JSON.readTree("{\"rule\":\"login\",\"key\":\"ip:10.0.0.1\",\"values\":[\"u2\",\"u1\"]}"));
    assertThat(json(send("GET", "/v1/audit/login/nobody", null)).get("values")).isEmpty();

    policies.top.put("login 5", List.of(new Offender("ip:1", 40, 2), new Offender("ip:2", 7, 2)));
    policies.top.put("login 15", List.of(new Offender("ip:3", 90, 4)));
    HttpResponse<String> top = send("GET", "/v1/top?rule=login", null);
    assertThat(json(top)).isEqualTo(JSON.readTree("""
        {"rule":"login","minutes":5,"items":[{"key":"ip:1","denials":40,"error":2},{"key":"ip:2","denials":7,"error":2}]}"""));
    assertThat(json(send("GET", "/v1/top?rule=login&minutes=15&count=1", null)).get("items"))
        .extracting(n -> n.get("key").asText()).containsExactly("ip:3");

    refused("GET", "/v1/top", null, "invalid_request", "'rule'");
    refused("GET", "/v1/top?rule=login&minutes=0", null, "invalid_request", "'minutes'");
    refused("GET", "/v1/top?rule=login&minutes=61", null, "invalid_request", "'minutes'");
    refused("GET", "/v1/top?rule=login&count=0", null, "invalid_page", "'count'");
    refused("GET", "/v1/audit/nope/k", null, "unknown_rule", "'nope'");
  }

  /** Every policy endpoint, with a body it accepts. */
  static final List<String[]> ENDPOINTS = List.of(
      new String[] {"PUT", "/v1/limits/api/k", "{\"tier\":\"premium\"}"},
      new String[] {"GET", "/v1/limits/api/k", null},
      new String[] {"DELETE", "/v1/limits/api/k", null},
      new String[] {"GET", "/v1/limits?rule=api", null},
      new String[] {"PUT", "/v1/bans/api/k", "{\"for\":\"1m\"}"},
      new String[] {"GET", "/v1/bans/api/k", null},
      new String[] {"DELETE", "/v1/bans/api/k", null},
      new String[] {"GET", "/v1/bans", null},
      new String[] {"PUT", "/v1/lists/allow/api/k", null},
      new String[] {"DELETE", "/v1/lists/deny/api/k", null},
      new String[] {"GET", "/v1/lists/allow/api", null},
      new String[] {"GET", "/v1/lists/deny", null},
      new String[] {"GET", "/v1/audit/api/k", null},
      new String[] {"GET", "/v1/top?rule=api", null});

  @Test
  void withAnAdminTokenEveryEndpointAnswers401WithoutItAndReachesNothing() throws Exception {
    Server guarded = serve(AdminGuard.of("t0ken-4f1a", InetAddress.getLoopbackAddress()));
    try {
      for (String[] e : ENDPOINTS) {
        for (String[] headers : List.of(new String[0], new String[] {"authorization", "Bearer wrong"},
            new String[] {"authorization", "Basic t0ken-4f1a"})) {
          HttpResponse<String> r = send(guarded, e[0], e[1], e[2], headers);
          assertThat(r.statusCode()).as("%s %s", e[0], e[1]).isEqualTo(401);
          assertThat(json(r).get("error").get("code").asText()).isEqualTo("unauthorized");
          assertThat(r.body()).doesNotContain("t0ken");
        }
      }
      assertThat(policies.calls).isZero();
      for (String[] e : ENDPOINTS) {
        HttpResponse<String> r = send(guarded, e[0], e[1], e[2], "authorization", "Bearer t0ken-4f1a");
        assertThat(r.statusCode()).as("%s %s: %s", e[0], e[1], r.body()).isIn(200, 204, 404);
      }
      assertThat(policies.calls).isEqualTo(ENDPOINTS.size());
    } finally {
      stop(guarded);
    }
  }

  @Test
  void beyondLoopbackWithoutATokenEveryEndpointIsRefusedWith403() throws Exception {
    Server open = serve(AdminGuard.of(null, InetAddress.getByName("10.9.9.9")));
    try {
      for (String[] e : ENDPOINTS) {
        HttpResponse<String> r = send(open, e[0], e[1], e[2]);
        assertThat(r.statusCode()).as("%s %s", e[0], e[1]).isEqualTo(403);
        assertThat(json(r).get("error").get("code").asText()).isEqualTo("admin_disabled");
      }
      assertThat(policies.calls).isZero();
    } finally {
      stop(open);
    }
  }
}
