package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard at {@code /} of a running service, in real headless Chromium: what it shows is
 * what {@code /metrics} and the admin API say, and without the admin token nothing on it changes
 * state.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardBrowserTest {
  private static final String TOKEN = "dash-9f3e";
  private static final Path IMAGES = Path.of("..", "docs", "images");
  private static final Pattern DECISIONS = Pattern.compile(
      "^sluice_decisions_total\\{outcome=\"(\\w+)\",rule=\"([^\"]+)\"[^}]*} ([0-9.E]+)$", Pattern.MULTILINE);
  private RunningService api;

  @BeforeAll
  void start() throws Exception {
    api = new RunningService(TOKEN);
  }

  @AfterAll
  void stop() throws Exception {
    api.close();
  }

  private HttpResponse<String> admin(String method, String path, String body) throws Exception {
    return api.sendWithHeaders(method, path, body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8),
        "authorization", "Bearer " + TOKEN, "content-type", "application/json");
  }

  private void acquire(String rule, String key, int times) throws Exception {
    for (int i = 0; i < times; i++) {
      api.post("/v1/acquire", "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\"}");
    }
  }

  private String url() {
    return "http://127.0.0.1:" + api.port() + "/";
  }

  private static java.util.Optional<WebElement> banRow(org.openqa.selenium.WebDriver d, String key) {
    return d.findElements(By.cssSelector("#bans tbody tr")).stream()
        .filter(tr -> key.equals(tr.getAttribute("data-key"))).findFirst();
  }

  private static WebDriverWait waiting(HeadlessChromium b, Duration d) {
    WebDriverWait w = new WebDriverWait(b.driver, d);
    w.pollingEvery(Duration.ofMillis(50));
    w.ignoring(StaleElementReferenceException.class);
    return w;
  }

  /** The rules' table as the page shows it, read in one go (the page redraws it each second). */
  @SuppressWarnings("unchecked")
  private static Map<String, Map<String, String>> table(HeadlessChromium b) {
    return (Map<String, Map<String, String>>) b.driver.executeScript("""
        const out = {};
        for (const tr of document.querySelectorAll('#rules tbody tr[data-rule]')) {
          const row = {};
          for (const td of tr.querySelectorAll('td[class]')) row[td.className.split(' ').pop()] = td.textContent;
          out[tr.dataset.rule] = row;
        }
        return out;
        """);
  }

  /** {@code sluice_decisions_total} by rule, then outcome as the page names it. */
  private Map<String, Map<String, String>> metrics() throws Exception {
    Map<String, Map<String, String>> out = new java.util.HashMap<>();
    Matcher m = DECISIONS.matcher(api.send("GET", "/metrics", null, new byte[0]).body());
    while (m.find()) {
      out.computeIfAbsent(m.group(2), r -> new java.util.HashMap<>())
          .put(m.group(1).replace('_', '-'), Long.toString((long) Double.parseDouble(m.group(3))));
    }
    return out;
  }

  private static Map<String, Map<String, String>> onlyCounts(Map<String, Map<String, String>> t) {
    Map<String, Map<String, String>> out = new java.util.HashMap<>();
    t.forEach((rule, row) -> {
      Map<String, String> c = new java.util.HashMap<>(row);
      c.keySet().retainAll(List.of("allowed", "denied", "shadow-denied", "degraded"));
      out.put(rule, c);
    });
    return out;
  }

  private void useToken(HeadlessChromium b, String token) {
    WebElement input = b.driver.findElement(By.id("token"));
    input.clear();
    input.sendKeys(token);
    b.driver.findElement(By.id("token-save")).click();
  }

  @Test
  void afterKnownTrafficThePageShowsWhatMetricsSay() throws Exception {
    Map<String, Map<String, String>> before = metrics();
    acquire("tiny", "metrics-k", 7);
    acquire("api.call", "metrics-k", 5);
    Map<String, Map<String, String>> after = metrics();
    assertThat(Long.parseLong(after.get("tiny").get("denied"))
        - Long.parseLong(before.getOrDefault("tiny", Map.of()).getOrDefault("denied", "0"))).isEqualTo(6);
    try (HeadlessChromium b = new HeadlessChromium(1400, 1000)) {
      b.driver.get(url());
      // Nothing else is sent meanwhile: the page's next answer shows the same counts.
      waiting(b, Duration.ofSeconds(10)).until(d -> onlyCounts(table(b)).equals(after));
      Map<String, Map<String, String>> shown = table(b);
      assertThat(after).hasSize(2);
      long allowed = Long.parseLong(after.get("tiny").get("allowed"));
      long denied = Long.parseLong(after.get("tiny").get("denied"));
      assertThat(shown.get("tiny").get("deny-ratio"))
          .isEqualTo(String.format(java.util.Locale.ROOT, "%.1f%%", 100.0 * denied / (allowed + denied)));
      assertThat(shown.get("tiny").get("source")).endsWith("limits.yaml");
      String totals = b.driver.findElement(By.id("totals")).getText();
      long allAllowed = after.values().stream().mapToLong(r -> Long.parseLong(r.get("allowed"))).sum();
      assertThat(totals).contains("allowed " + allAllowed);
    }
  }

  @Test
  void aBanSetThroughTheAdminApiAppearsWithinTwoSecondsAndItsKeyIsText() throws Exception {
    String key = "<img src=x id=injected onerror=\"document.title='owned'\">";
    try (HeadlessChromium b = new HeadlessChromium(1400, 1000)) {
      b.driver.get(url());
      useToken(b, TOKEN);
      waiting(b, Duration.ofSeconds(10)).until(d -> !d.findElement(By.id("keys")).getAttribute("class")
          .contains("hidden"));
      String path = "/v1/bans/tiny/" + java.net.URLEncoder.encode(key, StandardCharsets.UTF_8).replace("+", "%20");
      assertThat(admin("PUT", path, "{\"for\":\"10m\"}").statusCode()).isEqualTo(200);
      long t0 = System.nanoTime();
      // The page redraws its tables each second: an element found may be replaced before it is
      // read, so the row is read, and later clicked, inside waits that look again.
      String shown = waiting(b, Duration.ofSeconds(2)).until(d -> banRow(d, key)
          .map(tr -> tr.findElement(By.className("key")).getText()).orElse(null));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      System.out.println("ban shown on the dashboard after " + ms + " ms");
      assertThat(shown).isEqualTo(key);
      assertThat(b.driver.findElements(By.id("injected"))).isEmpty();
      assertThat(b.driver.getTitle()).isEqualTo("Sluice");

      // With the token, its control lifts it.
      waiting(b, Duration.ofSeconds(5)).until(d -> banRow(d, key).map(tr -> {
        tr.findElement(By.tagName("button")).click();
        return true;
      }).orElse(false));
      waiting(b, Duration.ofSeconds(5)).until(d -> d.findElement(By.id("action-result")).getText()
          .contains("Unban: done"));
      assertThat(admin("GET", path, null).statusCode()).isEqualTo(404);
    }
  }

  @Test
  void withoutTheTokenNoControlChangesState() throws Exception {
    String key = "no-token-k";
    assertThat(admin("PUT", "/v1/bans/tiny/banned-before", "{\"for\":\"10m\"}").statusCode()).isEqualTo(200);
    try (HeadlessChromium b = new HeadlessChromium(1400, 1000)) {
      b.driver.get(url());
      waiting(b, Duration.ofSeconds(10)).until(d -> d.findElement(By.tagName("body")).getAttribute("data-updates")
          != null);
      // Keys are not shown without the token, so there is no row control to use; the form is there.
      assertThat(b.driver.findElement(By.id("keys")).getAttribute("class")).contains("hidden");
      assertThat(b.driver.getPageSource()).doesNotContain("banned-before");
      for (String token : List.of("", "wrong-token")) {
        if (!token.isEmpty()) {
          useToken(b, token);
        }
        b.driver.findElement(By.id("ban-rule")).clear();
        b.driver.findElement(By.id("ban-rule")).sendKeys("tiny");
        b.driver.findElement(By.id("ban-key")).clear();
        b.driver.findElement(By.id("ban-key")).sendKeys(key);
        b.driver.findElement(By.id("ban-submit")).click();
        waiting(b, Duration.ofSeconds(5)).until(d -> d.findElement(By.id("action-result")).getText()
            .startsWith("Ban: refused (401)"));
        assertThat(admin("GET", "/v1/bans/tiny/" + key, null).statusCode()).as("token '%s'", token).isEqualTo(404);
      }
      // Calls from the page's own script, without the token, to lift a ban and remove a live limit.
      assertThat(admin("PUT", "/v1/limits/tiny/limited", "{\"windows\":[{\"limit\":3,\"period\":\"1m\"}]}")
          .statusCode()).isEqualTo(200);
      Object statuses = b.driver.executeAsyncScript("""
          const done = arguments[arguments.length - 1];
          Promise.all([fetch('/v1/bans/tiny/banned-before', {method: 'DELETE'}),
                       fetch('/v1/limits/tiny/limited', {method: 'DELETE'})])
            .then(rs => done(rs.map(r => r.status)));
          """);
      assertThat(statuses).isEqualTo(List.of(401L, 401L));
      assertThat(admin("GET", "/v1/bans/tiny/banned-before", null).statusCode()).isEqualTo(200);
      assertThat(admin("GET", "/v1/limits/tiny/limited", null).statusCode()).isEqualTo(200);
    }
  }
}
