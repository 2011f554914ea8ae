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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API checks a request's shape and leaves its rule, key and cost to the limiter, whose
 * errors it answers by their type: a limiter with settings of its own (a key limit of 8 bytes
 * here) is answered with its own words and the API's error codes.
 */
class HttpErrorsOfTheLimiterTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  @TempDir
  static Path dir;
  private static RateLimiter limiter;
  private static SluiceServer server;

  @BeforeAll
  static void start() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), RunningService.RULES);
    limiter = Sluice.builder().maxKeyBytes(8).build();
    ConfigReloader config = new ConfigReloader(dir, limiter, (ok, c, error) -> {}, Clock.systemUTC());
    server = SluiceServer.builder().limiter(limiter).config(config).prometheus(
        new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).port(0).adminToken("s3cret").build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
    limiter.close();
  }

  private static JsonNode error(String path, String body, String code) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .header("authorization", "Bearer s3cret").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    JsonNode e = JSON.readTree(r.body()).get("error");
    assertThat(e.get("code").asText()).isEqualTo(code);
    return e;
  }

  @Test
  void aKeyOverTheLimitersOwnMaximumIsAnInvalidKeyNamingThatMaximum() throws Exception {
    assertThat(error("/v1/acquire", "{\"rule\":\"api.call\",\"key\":\"123456789\"}", "invalid_key")
        .get("message").asText()).isEqualTo("'key' is 9 bytes of UTF-8; the maximum is 8");
    assertThat(error("/v1/acquire", "{\"items\":[{\"rule\":\"api.call\",\"key\":\"ok\"},"
        + "{\"rule\":\"api.call\",\"key\":\"123456789\"}]}", "invalid_key").get("message").asText())
        .isEqualTo("'items[1].key' is 9 bytes of UTF-8; the maximum is 8");
    assertThat(error("/v1/reset", "{\"rule\":\"api.call\",\"key\":\"123456789\"}", "invalid_key")
        .get("message").asText()).isEqualTo("'key' is 9 bytes of UTF-8; the maximum is 8");
  }

  @Test
  void theFirstBadItemOfAListIsTheOneNamed() throws Exception {
    assertThat(error("/v1/acquire", "{\"items\":[{\"rule\":\"api.call\",\"key\":\"ok\"},"
        + "{\"rule\":\"api.call\",\"key\":\"\"},{\"rule\":\"nope\",\"key\":\"k\"}]}", "invalid_key")
        .get("message").asText()).isEqualTo("'items[1].key' must not be empty");
    assertThat(error("/v1/acquire", "{\"items\":[{\"rule\":\"api.call\",\"key\":\"ok\"},"
        + "{\"rule\":\"nope\",\"key\":\"k\"},{\"rule\":\"api.call\",\"key\":\"\"}]}", "unknown_rule")
        .get("message").asText()).isEqualTo("unknown rule 'nope'");
  }

  @Test
  void aRepeatedItemWhoseCostsOverflowIsAnInvalidCostNamingIt() throws Exception {
    String big = Long.toString(Long.MAX_VALUE);
    assertThat(error("/v1/acquire", "{\"items\":[{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":" + big
        + "},{\"rule\":\"api.call\",\"key\":\"k\",\"cost\":1}]}", "invalid_cost").get("message").asText())
        .contains("'api.call'", "'k'", "add up to more than " + big);
  }
}
