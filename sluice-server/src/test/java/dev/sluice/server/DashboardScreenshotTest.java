package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.http.HeadlessChromium;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Makes {@code docs/images/dashboard.png}: {@code sluice serve} started from a deployment's
 * directory with {@code --config config/limits.yaml}, as an operator runs it, so that the page shows
 * the path as given; traffic, a ban, a live limit and leased keys; the whole page, in headless Chromium.
 */
class DashboardScreenshotTest {
  private static final String TOKEN = "shot-7e21";
  private static final Path IMAGES = Path.of("..", "docs", "images");
  private static final String RULES = """
      limits:
        - name: api.call
          allow: ["monitor:*"]
          config:
            - limit: 1000000
              period: 1h
        - name: tiny
          deny: ["ip:203.0.113.0/24", "ip:198.51.100.7"]
          config:
            - limit: 1
              period: 1h
        - name: search
          mode: leased
          lease_length: 30m
          report_interval: 100ms
          lease_slack: 10%
          config:
            - limit: 100000
              period: 1h
      """;

  @TempDir
  Path dir;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private int port;

  private int send(String method, String path, String body) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("content-type", "application/json")
        .header("authorization", "Bearer " + TOKEN)
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .build();
    return http.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private void acquire(String rule, String key, int times) throws Exception {
    for (int i = 0; i < times; i++) {
      send("POST", "/v1/acquire", "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\"}");
    }
  }

  @Test
  void theDashboardScreenshotIsMadeHere() throws Exception {
    Files.createDirectories(dir.resolve("config"));
    Files.writeString(dir.resolve("config").resolve("limits.yaml"), RULES);
    try (ServeProcess p = ServeProcess.serveIn(dir, dir.resolve("serve.log"), "--config", "config/limits.yaml",
        "--admin-token", TOKEN)) {
      port = p.awaitPort();
      for (int i = 0; i < 40; i++) {
        acquire("api.call", "user:" + (i % 7), 3);
        acquire("tiny", "ip:10.0.0." + (i % 5), 2);
        acquire("search", "tenant:" + (i % 3), 2);
      }
      assertThat(send("PUT", "/v1/bans/tiny/ip:10.0.0.66", "{\"for\":\"1h\"}")).isEqualTo(200);
      assertThat(send("PUT", "/v1/limits/api.call/user:vip", "{\"windows\":[{\"limit\":5000,\"period\":\"1h\"}]}"))
          .isEqualTo(200);
      try (HeadlessChromium b = new HeadlessChromium(1300, 1100)) {
        b.driver.get("http://127.0.0.1:" + port + "/");
        b.driver.findElement(By.id("token")).sendKeys(TOKEN);
        b.driver.findElement(By.id("token-save")).click();
        WebDriverWait wait = new WebDriverWait(b.driver, Duration.ofSeconds(20));
        wait.until(d -> !d.findElements(By.cssSelector("#top table")).isEmpty());
        Thread.sleep(1_500);
        for (int i = 0; i < 20; i++) {
          acquire("api.call", "user:" + (i % 7), 2);
          acquire("tiny", "ip:10.0.0." + (i % 5), 1);
          acquire("search", "tenant:" + (i % 3), 3);
        }
        wait.until(d -> d.findElements(By.cssSelector("#rules polyline")).size() >= 3
            && d.findElements(By.cssSelector("#leases tbody tr[data-key]")).size() == 3
            && !d.findElements(By.cssSelector("#fleet tbody tr.self")).isEmpty());
        assertThat(b.driver.findElement(By.cssSelector("#sources tbody td")).getText())
            .isEqualTo("config/limits.yaml");
        // The whole page, not only what a window of 1100 pixels shows.
        long height = (Long) b.driver.executeScript("return document.documentElement.scrollHeight;");
        b.driver.manage().window().setSize(new Dimension(1300, (int) height + 140));
        Thread.sleep(300);
        Files.createDirectories(IMAGES);
        byte[] png = b.driver.getScreenshotAs(OutputType.BYTES);
        Files.write(IMAGES.resolve("dashboard.png"), png);
        assertThat(png.length).isGreaterThan(10_000);
      }
    }
  }
}
