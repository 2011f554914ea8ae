package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.server.cli.Main;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live limits set through the admin API until the memory store's bound on policy records refuses
 * them, against {@code sluice serve} in a child JVM: 70,401 live limits of 512-byte keys and 16
 * windows once ended a 192 MB process with {@code OutOfMemoryError}, as only their count was
 * bounded. Now a put past the bound is a 507 naming it, and everything else keeps working.
 */
class PolicyFloodServeTest {
  @TempDir
  Path dir;

  static String key(int i) {
    String head = "user:" + i + ":";
    return head + "x".repeat(512 - head.length());
  }

  static final String SIXTEEN_WINDOWS;

  static {
    StringBuilder sb = new StringBuilder("{\"windows\":[");
    for (int i = 1; i <= 16; i++) {
      sb.append(i > 1 ? "," : "").append("{\"limit\":").append(i).append(",\"period\":\"").append(i).append("m\"}");
    }
    SIXTEEN_WINDOWS = sb.append("]}").toString();
  }

  @Test
  void liveLimitsPastTheStoresPolicyBytesAre507AndTheServiceKeepsDeciding() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config:
              - limit: 5
                period: 1m
        """);
    try (ServeProcess p = ServeProcess.start(dir.resolve("serve.log"), List.of("-Xmx192m"), Main.class.getName(),
        List.of("serve", "--host", "127.0.0.1", "--port", "0", "--config", dir.toString(),
            "--max-store-bytes", "2m"))) {
      int port = p.awaitPort();
      ServiceClient client = new ServiceClient(port);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

      HttpResponse<String> refused = null;
      int set = 0;
      for (int i = 0; i < 5_000 && refused == null; i++) {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/v1/limits/api/" + key(i))).timeout(Duration.ofSeconds(10))
            .PUT(HttpRequest.BodyPublishers.ofString(SIXTEEN_WINDOWS)).header("content-type", "application/json")
            .build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          set++;
        } else {
          refused = r;
        }
      }

      // 512 KB for policy records (a quarter of 2 MB), about 3 KB each.
      assertThat(refused).as("no put was refused after %d live limits", set).isNotNull();
      assertThat(set).isBetween(100, 300);
      assertThat(refused.statusCode()).as(refused.body()).isEqualTo(507);
      JsonNode error = ServiceClient.json(refused).get("error");
      assertThat(error.get("code").asText()).isEqualTo("policies_full");
      assertThat(error.get("message").asText()).contains("of their 524288 bytes", "--max-store-bytes");

      assertThat(client.get("/healthz").statusCode()).isEqualTo(200);
      // A key with a live limit: 1 per minute in its first window.
      String held = "{\"rule\":\"api\",\"key\":\"" + key(0) + "\"}";
      assertThat(client.post("/v1/acquire", held).statusCode()).isEqualTo(200);
      assertThat(client.post("/v1/acquire", held).statusCode()).isEqualTo(429);
      // Another key: the rule's 5.
      for (int i = 0; i < 5; i++) {
        assertThat(client.post("/v1/acquire", "{\"rule\":\"api\",\"key\":\"other\"}").statusCode()).isEqualTo(200);
      }
      assertThat(client.post("/v1/acquire", "{\"rule\":\"api\",\"key\":\"other\"}").statusCode()).isEqualTo(429);
      assertThat(p.log()).doesNotContain("OutOfMemoryError").doesNotContain(key(0));
    }
  }
}
