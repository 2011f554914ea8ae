package dev.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leased mode's metrics through the service as it runs: alone on its (memory) store, the instance
 * elects itself leader, publishes sizes, takes units and admits from them, and {@code /metrics}
 * says so.
 */
class LeaseMetricsServeTest {
  @TempDir
  Path dir;

  final HttpClient http = HttpClient.newHttpClient();

  HttpResponse<String> call(int port, String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    b = body == null ? b.GET() : b.POST(HttpRequest.BodyPublishers.ofString(body)).header("content-type",
        "application/json");
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static double metric(String text, String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? ([0-9.eE+-]+)$").matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : -1;
  }

  @Test
  void takesLeadershipRebalancesAndUnitsHeldShowOnMetrics() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            algorithm: token_bucket
            mode: leased
            lease_length: 400ms
            report_interval: 20ms
            lease_slack: 1%
            config:
              - {limit: 100000, period: 1s}
        """);
    try (SluiceService service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofMillis(200)), MemoryStore.builder().build())) {
      int port = service.port();
      String text = "";
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      // Requests until the instance leads, has rebalanced and has taken units.
      while (System.nanoTime() < deadline) {
        for (int i = 0; i < 20; i++) {
          assertThat(call(port, "POST", "/v1/acquire", "{\"rule\":\"api\",\"key\":\"all\"}").statusCode()).isEqualTo(200);
        }
        text = call(port, "GET", "/metrics", null).body();
        if (metric(text, "sluice_lease_leader") == 1 && metric(text, "sluice_lease_rebalances_total") > 0
            && metric(text, "sluice_lease_units_taken_total") > 0) {
          break;
        }
        Thread.sleep(20);
      }
      assertThat(metric(text, "sluice_lease_leader")).isEqualTo(1);
      assertThat(metric(text, "sluice_lease_leader_changes_total")).isGreaterThanOrEqualTo(1);
      assertThat(metric(text, "sluice_lease_rebalances_total")).isPositive();
      assertThat(metric(text, "sluice_lease_takes_total")).isPositive();
      assertThat(metric(text, "sluice_lease_units_taken_total")).isPositive();
      assertThat(metric(text, "sluice_lease_keys")).isBetween(0.0, 1.0);
      // Units held never exceed the budget: 1 % of 100,000.
      assertThat(metric(text, "sluice_lease_units_held")).isBetween(0.0, 1000.0);
    }
  }
}
