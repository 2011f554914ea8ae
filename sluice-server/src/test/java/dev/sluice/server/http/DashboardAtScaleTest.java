package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.RateLimiter;
import dev.sluice.policy.ListKind;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard of a service with 10,000 rules and 100,000 denied keys, the longest keys among
 * them: its answer stays within its bounds in count and bytes, and the page still loads in
 * headless Chromium (its time is measured in sluice-bench, DashboardLoad; here it is only printed).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardAtScaleTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "scale-2b7d";
  static final int RULES = 10_000;
  static final int DENIED_KEYS = 100_000;
  private RunningService api;

  /** {@code n} rules {@code r0..}, each 1 per hour. */
  static String rules(int n) {
    StringBuilder b = new StringBuilder("limits:\n");
    for (int i = 0; i < n; i++) {
      b.append("  - name: r").append(i).append("\n    config:\n      - limit: 1\n        period: 1h\n");
    }
    return b.toString();
  }

  /** A key of 512 bytes that JSON writes at its longest: each byte a control character or a quote. */
  static String worstKey(int i) {
    String id = "k" + i + "-";
    StringBuilder b = new StringBuilder(id);
    while (b.length() < 512) {
      b.append(b.length() % 2 == 0 ? '\u0001' : '"');
    }
    return b.toString();
  }

  /** A list entry of 512 bytes that JSON writes at its longest (entries hold no control character). */
  static String worstEntry(int i) {
    StringBuilder b = new StringBuilder("e" + i + "-");
    while (b.length() < 512) {
      b.append(b.length() % 2 == 0 ? '\\' : '"');
    }
    return b.toString();
  }

  @BeforeAll
  void start() throws Exception {
    api = new RunningService(TOKEN, rules(RULES));
    RateLimiter limiter = api.service.limiter();
    // Each key allowed once, then denied: 100,000 denied keys spread over the rules. Decided by the
    // service's own limiter, the one behind its HTTP API, to save 200,000 round trips.
    for (int i = 0; i < DENIED_KEYS; i++) {
      String rule = "r" + (i % RULES);
      String key = i < 1_000 ? worstKey(i) : "user:" + i;
      limiter.acquire(rule, key);
      limiter.acquire(rule, key);
    }
    // Control characters cannot travel in a path: these bans are set through the same limiter.
    for (int i = 0; i < 30; i++) {
      limiter.policies().ban("r" + i, worstKey(i), Instant.now().plus(Duration.ofHours(1))).toCompletableFuture().join();
    }
    // And as many run-time list entries of each kind, more than a page.
    for (int i = 0; i < 30; i++) {
      limiter.policies().addToList(ListKind.ALLOW, "r" + i, worstEntry(i)).toCompletableFuture().join();
      limiter.policies().addToList(ListKind.DENY, "r" + i, worstEntry(i + 30)).toCompletableFuture().join();
    }
  }

  @AfterAll
  void stop() throws Exception {
    api.close();
  }

  private HttpResponse<String> dashboard(String query, boolean withToken) throws Exception {
    return withToken
        ? api.sendWithHeaders("GET", "/v1/dashboard" + query, new byte[0], "authorization", "Bearer " + TOKEN)
        : api.sendWithHeaders("GET", "/v1/dashboard" + query, new byte[0]);
  }

  @Test
  void theAnswerIsBoundedInCountAndBytes() throws Exception {
    HttpResponse<String> r = dashboard("", true);
    assertThat(r.statusCode()).isEqualTo(200);
    int bytes = r.body().getBytes(StandardCharsets.UTF_8).length;
    System.out.println("dashboard answer with " + RULES + " rules and " + DENIED_KEYS + " denied keys: " + bytes
        + " bytes");
    assertThat(bytes).isLessThanOrEqualTo(DashboardJson.MAX_BYTES);
    JsonNode d = JSON.readTree(r.body());
    assertThat(d.at("/rules/inForce").asInt()).isEqualTo(RULES);
    assertThat(d.at("/rules/items")).hasSize(DashboardApi.DEFAULT_RULES);
    assertThat(d.at("/rules/others/rules").asInt()).isEqualTo(RULES - DashboardApi.DEFAULT_RULES);
    long denied = d.at("/rules/others/totals/denied").asLong();
    for (JsonNode row : d.at("/rules/items")) {
      denied += row.at("/totals/denied").asLong();
    }
    assertThat(denied).isEqualTo(d.at("/totals/denied").asLong()).isEqualTo(DENIED_KEYS);
    assertThat(d.at("/keys/bans/items")).hasSize(DashboardApi.POLICY_PAGE);
    assertThat(d.at("/keys/bans/more").asBoolean()).isTrue();
    assertThat(d.at("/keys/listEntries/items")).hasSize(2 * DashboardApi.POLICY_PAGE);
    assertThat(d.at("/keys/listEntries/more").asBoolean()).isTrue();
    assertThat(d.at("/keys/topDenied")).hasSize(DashboardApi.TOP_RULES);
    assertThat(d.at("/keys/topDenied/0/items").size()).isBetween(1, DashboardApi.TOP_KEYS);

    // The most rows an answer gives, and a filter.
    JsonNode most = JSON.readTree(dashboard("?count=" + DashboardApi.MAX_RULES, true).body());
    assertThat(most.at("/rules/items")).hasSize(DashboardApi.MAX_RULES);
    JsonNode filtered = JSON.readTree(dashboard("?rule=r999", true).body());
    assertThat(filtered.at("/rules/matching").asInt()).isEqualTo(11);
    assertThat(filtered.at("/rules/items")).hasSize(11);
  }

  @Test
  void withoutTheTokenTheAnswerNamesNoKey() throws Exception {
    HttpResponse<String> r = dashboard("", false);
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode d = JSON.readTree(r.body());
    assertThat(d.has("keys")).isFalse();
    assertThat(d.at("/admin/keysVisible").asBoolean()).isFalse();
    assertThat(r.body()).doesNotContain("user:").doesNotContain("k1-");
  }

  @Test
  void badQueriesAreRefusedNamingWhatWasWrong() throws Exception {
    HttpResponse<String> count = dashboard("?count=0", false);
    assertThat(count.statusCode()).isEqualTo(400);
    assertThat(count.body()).contains("'count' must be an integer from 1 to 200");
    HttpResponse<String> filter = dashboard("?rule=" + "x".repeat(DashboardApi.MAX_FILTER_CHARS + 1), false);
    assertThat(filter.statusCode()).isEqualTo(400);
    assertThat(filter.body()).contains("'rule'");
    HttpResponse<String> unknown = dashboard("?color=red", false);
    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(unknown.body()).contains("color");
  }

  @Test
  void thePageLoadsWithTenThousandRules() throws Exception {
    try (HeadlessChromium b = new HeadlessChromium(1400, 1000)) {
      b.driver.get("http://127.0.0.1:" + api.port() + "/");
      b.driver.executeScript("sessionStorage.setItem('sluice.adminToken', arguments[0])", TOKEN);
      Instant t0 = Instant.now();
      b.driver.navigate().refresh();
      new WebDriverWait(b.driver, Duration.ofSeconds(20)).pollingEvery(Duration.ofMillis(20))
          .until(d -> d.findElements(By.cssSelector("#bans tbody tr")).size() == DashboardApi.POLICY_PAGE);
      long ms = Duration.between(t0, Instant.now()).toMillis();
      System.out.println("dashboard page with " + RULES + " rules and " + DENIED_KEYS + " denied keys loaded in "
          + ms + " ms");
      assertThat(b.driver.findElements(By.cssSelector("#rules tbody tr[data-rule]")))
          .hasSize(DashboardApi.DEFAULT_RULES);
      assertThat(b.driver.findElement(By.cssSelector("#rules tr.others .name")).getText())
          .isEqualTo((RULES - DashboardApi.DEFAULT_RULES) + " other rules");
    }
  }
}
