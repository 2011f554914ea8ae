package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard's fleet, leases and access lists (configured, and added at run time) on a service
 * on the memory store: what the answer and the page (in headless Chromium) show with the admin
 * token, and that without it they count but name no instance, key or entry.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardPanelsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "panels-5c1a";
  private RunningService api;

  static String rules() {
    StringBuilder allow = new StringBuilder();
    for (int i = 0; i < 150; i++) {
      allow.append(i == 0 ? "" : ", ").append("\"monitor:").append(i).append('"');
    }
    return """
        limits:
          - name: hot
            mode: leased
            lease_length: 30m
            report_interval: 50ms
            lease_slack: 10%
            config:
              - limit: 100000
                period: 1h
          - name: guarded
            allow: [ALLOW]
            deny: ["ip:203.0.113.0/24", "ip:198.51.100.7", "<b>bad</b>"]
            config:
              - limit: 10
                period: 1h
        """.replace("ALLOW", allow);
  }

  @BeforeAll
  void start() throws Exception {
    api = new RunningService(TOKEN, rules());
  }

  @AfterAll
  void stop() throws Exception {
    api.close();
  }

  private JsonNode dashboard(String token) throws Exception {
    HttpResponse<String> r = token == null ? api.send("GET", "/v1/dashboard", null, new byte[0])
        : api.sendWithHeaders("GET", "/v1/dashboard", new byte[0], "authorization", "Bearer " + token);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  /** Acquires on the leased rule until this instance's report says it holds units of the key. */
  private JsonNode leasedAfterTraffic(String key) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    JsonNode leases = null;
    while (System.nanoTime() < deadline) {
      api.post("/v1/acquire", "{\"rule\":\"hot\",\"key\":\"" + key + "\"}");
      leases = dashboard(TOKEN).get("leases");
      for (JsonNode k : leases.get("rules").get(0).get("keys")) {
        if (k.get("key").asText().equals(key) && k.get("held").asLong() > 0) {
          return leases;
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no units of " + key + " held within 20 s: " + leases);
  }

  @Test
  void withTheTokenTheAnswerListsTheFleetTheLeasesAndTheListsEntries() throws Exception {
    JsonNode d = dashboard(TOKEN);
    JsonNode fleet = d.get("fleet");
    assertThat(fleet.get("live").asInt()).isEqualTo(1);
    assertThat(fleet.get("instances")).hasSize(1);
    assertThat(fleet.get("instances").get(0).get("id").asText()).isEqualTo(fleet.get("self").asText())
        .startsWith(ProcessHandle.current().pid() + "-");

    List<String> lists = new ArrayList<>();
    for (JsonNode l : d.get("lists").get("items")) {
      lists.add(l.get("rule").asText() + " " + l.get("list").asText() + " " + l.get("size").asInt() + " "
          + l.get("entries").size() + " " + l.get("more").asInt());
    }
    assertThat(lists).containsExactly("guarded allow 150 100 50", "guarded deny 3 3 0");
    JsonNode allow = d.get("lists").get("items").get(0).get("entries");
    assertThat(allow.get(0).asText()).isEqualTo("monitor:0");
    assertThat(allow.get(99).asText()).isEqualTo("monitor:99");
    assertThat(d.get("lists").get("truncated").asBoolean()).isFalse();

    JsonNode leases = leasedAfterTraffic("user:1");
    assertThat(leases.get("leasedRules").asInt()).isEqualTo(1);
    assertThat(leases.get("reported").asBoolean()).isTrue();
    assertThat(leases.get("instances").asInt()).isEqualTo(1);
    JsonNode hot = leases.get("rules").get(0);
    assertThat(hot.get("name").asText()).isEqualTo("hot");
    assertThat(hot.get("keysReported").asInt()).isEqualTo(1);
    JsonNode key = hot.get("keys").get(0);
    assertThat(key.get("held").asLong()).isEqualTo(hot.get("unitsHeld").asLong())
        .isLessThanOrEqualTo(key.get("sizeInUse").asLong());
    assertThat(key.get("budget").asLong()).isEqualTo(10_000);
    // The only instance reports, so it leads once it has sized anyone.
    if (!leases.get("leader").isNull()) {
      assertThat(leases.get("leader").get("instance").asText()).isEqualTo(fleet.get("self").asText());
      assertThat(leases.get("leader").get("self").asBoolean()).isTrue();
    }
  }

  @Test
  void withoutTheTokenTheAnswerCountsButNamesNoInstanceKeyOrEntry() throws Exception {
    leasedAfterTraffic("user:2");
    for (String token : new String[] {null, "wrong"}) {
      JsonNode d = dashboard(token);
      assertThat(d.get("fleet").get("live").asInt()).isEqualTo(1);
      assertThat(d.get("fleet").has("self")).isFalse();
      assertThat(d.get("fleet").has("instances")).isFalse();
      assertThat(d.get("leases").get("leasedRules").asInt()).isEqualTo(1);
      assertThat(d.get("leases").has("rules")).isFalse();
      assertThat(d.has("lists")).isFalse();
      assertThat(d.toString()).doesNotContain("user:2", "monitor:1", "198.51.100.7", ProcessHandle.current().pid()
          + "-");
    }
  }

  @Test
  void thePageShowsThemWithTheTokenAndCountsWithoutIt() throws Exception {
    leasedAfterTraffic("user:3");
    try (HeadlessChromium b = new HeadlessChromium(1400, 1400)) {
      b.driver.get("http://127.0.0.1:" + api.port() + "/");
      WebDriverWait wait = new WebDriverWait(b.driver, Duration.ofSeconds(10));
      wait.until(d -> d.findElement(By.id("fleet-note")).getText().startsWith("1 live instance"));
      assertThat(b.driver.findElement(By.id("fleet")).getAttribute("class")).contains("hidden");
      assertThat(b.driver.findElement(By.id("leases-note")).getText())
          .startsWith("1 leased rule(s). Leased keys are shown with the admin token");
      assertThat(b.driver.getPageSource()).doesNotContain("user:3", "monitor:1,");

      WebElement input = b.driver.findElement(By.id("token"));
      input.sendKeys(TOKEN);
      b.driver.findElement(By.id("token-save")).click();
      // The page redraws each second: each row is read in one go.
      String held = wait.until(d -> (String) b.driver.executeScript("""
          const tr = [...document.querySelectorAll('#leases tbody tr')].find(t => t.dataset.key === 'user:3');
          return tr ? tr.querySelector('.held').textContent : null;"""));
      assertThat(Long.parseLong(held)).isPositive();
      String self = wait.until(d -> (String) b.driver.executeScript(
          "const tr = document.querySelector('#fleet tbody tr.self'); return tr ? tr.textContent : null;"));
      assertThat(self).startsWith(ProcessHandle.current().pid() + "-").contains("(this instance)");
      String allow = (String) b.driver.executeScript(
          "return document.querySelector(\"#lists tbody tr[data-list='allow']\").textContent;");
      assertThat(allow).contains("monitor:0, monitor:1,", "monitor:99 … and 50 more").doesNotContain("monitor:100");
      // An entry is text, never HTML.
      String deny = (String) b.driver.executeScript(
          "return document.querySelector(\"#lists tbody tr[data-list='deny']\").textContent;");
      assertThat(deny).contains("<b>bad</b>");
      assertThat(b.driver.findElements(By.cssSelector("#lists b"))).isEmpty();
    }
  }

  @Test
  void anEntryAddedAtRunTimeShowsWithTheTokenAndItsControlRemovesIt() throws Exception {
    String entry = "ip:192.0.2.0/24";
    String path = "/v1/lists/deny/guarded/ip:192.0.2.0%2F24";
    HttpResponse<String> add = api.sendWithHeaders("PUT", path, new byte[0], "authorization", "Bearer " + TOKEN);
    assertThat(add.statusCode()).as(add.body()).isEqualTo(200);
    // In the answer with the token, as the admin API lists it; without it, not at all.
    assertThat(dashboard(TOKEN).at("/keys/listEntries/items").toString())
        .contains("{\"rule\":\"guarded\",\"list\":\"deny\",\"entry\":\"ip:192.0.2.0/24\"}");
    assertThat(dashboard(null).toString()).doesNotContain("192.0.2.0");
    try (HeadlessChromium b = new HeadlessChromium(1400, 1400)) {
      b.driver.get("http://127.0.0.1:" + api.port() + "/");
      WebDriverWait wait = new WebDriverWait(b.driver, Duration.ofSeconds(10));
      wait.until(d -> d.findElement(By.id("fleet-note")).getText().startsWith("1 live instance"));
      assertThat(b.driver.getPageSource()).doesNotContain("192.0.2.0");
      b.driver.findElement(By.id("token")).sendKeys(TOKEN);
      b.driver.findElement(By.id("token-save")).click();
      String row = "[...document.querySelectorAll('#entries tbody tr')].find(t => t.dataset.entry === '" + entry + "')";
      String shown = wait.until(d -> (String) b.driver.executeScript("const tr = " + row
          + "; return tr ? tr.textContent : null;"));
      assertThat(shown).startsWith("guardeddeny" + entry);
      // Its control removes it (the page redraws each second: found and clicked in one go).
      wait.until(d -> (Boolean) b.driver.executeScript("const tr = " + row
          + "; if (!tr) return false; tr.querySelector('button').click(); return true;"));
      wait.until(d -> d.findElement(By.id("action-result")).getText().contains("Remove list entry: done"));
      wait.until(d -> (Boolean) b.driver.executeScript("return !" + row + ";"));
    }
    HttpResponse<String> after = api.sendWithHeaders("GET", "/v1/lists/deny/guarded", new byte[0],
        "authorization", "Bearer " + TOKEN);
    assertThat(JSON.readTree(after.body()).get("items")).isEmpty();
  }

  @Test
  void withNoLeasedRuleThePageSaysSo() throws Exception {
    try (RunningService plain = new RunningService(TOKEN);
        HeadlessChromium b = new HeadlessChromium(1400, 1000)) {
      b.driver.get("http://127.0.0.1:" + plain.port() + "/");
      new WebDriverWait(b.driver, Duration.ofSeconds(10)).until(d -> d.findElement(By.id("leases-note")).getText()
          .equals("No rule is leased (mode: leased): every key is decided by the store."));
      assertThat(b.driver.findElement(By.id("leases")).getAttribute("class")).contains("hidden");
    }
  }
}
