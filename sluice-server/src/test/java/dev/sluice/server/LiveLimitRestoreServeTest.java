package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * As a user following docs/policies.md ("Live limits") does it, with {@code sluice serve} over
 * HTTP: a key of a rule of 5 a minute at 4 used is given 3 a minute ({@code PUT
 * /v1/limits/...}), peeked at and denied under it, and given its rule's windows back
 * ({@code DELETE}): it has 1 left, then admits one and is denied the next — on every algorithm,
 * on the memory store and on Redis.
 */
class LiveLimitRestoreServeTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final List<String> ALGORITHMS =
      List.of("sliding_log", "sliding_window", "fixed_window", "token_bucket", "leaky_bucket");
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private int port;

  private HttpResponse<String> send(String method, String path, String body) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("content-type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
        .build();
    return http.send(r, HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode acquire(String rule, String key, int cost) throws Exception {
    HttpResponse<String> r = send("POST", "/v1/acquire",
        "{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\",\"cost\":" + cost + "}");
    assertThat(r.statusCode()).as(r.body()).isIn(200, 429);
    return ServiceClient.json(r);
  }

  private static JsonNode window(JsonNode decision) {
    return decision.get("items").get(0).get("windows").get(0);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "redis"})
  void aLimitLoweredOverHttpPeekedAndRemovedLeavesOneOfFive(String store, @TempDir Path dir) throws Exception {
    StringBuilder yaml = new StringBuilder("limits:\n");
    for (String a : ALGORITHMS) {
      yaml.append("  - name: per_user.").append(a).append("\n    algorithm: ").append(a)
          .append("\n    config:\n      - limit: 5\n        period: 60\n");
    }
    Files.writeString(dir.resolve("limits.yaml"), yaml);
    String uri = store.equals("memory") ? "memory" : redis.get().uri();
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.resolve("limits.yaml").toString(),
        "--store", uri)) {
      port = p.awaitPort();
      for (String a : ALGORITHMS) {
        String rule = "per_user." + a;
        for (String key : List.of("user:42", "user:7")) {
          for (int i = 0; i < 4; i++) {
            assertThat(acquire(rule, key, 1).get("allowed").asBoolean()).as("%s %s", rule, key).isTrue();
          }
        }
        HttpResponse<String> put = send("PUT", "/v1/limits/" + rule + "/user:42",
            "{\"windows\":[{\"limit\":3,\"period\":\"1m\"}]}");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        JsonNode peek = acquire(rule, "user:42", 0);
        assertThat(window(peek).get("limit").asLong()).as(rule).isEqualTo(3);
        assertThat(window(peek).get("remaining").asLong()).as(rule).isZero();
        assertThat(acquire(rule, "user:42", 1).get("allowed").asBoolean()).as(rule).isFalse();

        assertThat(send("DELETE", "/v1/limits/" + rule + "/user:42", null).statusCode()).isEqualTo(204);
        JsonNode back = acquire(rule, "user:42", 0);
        assertThat(window(back).get("limit").asLong()).as(rule).isEqualTo(5);
        // As user:7, which consumed as much and never changed windows.
        assertThat(window(back).get("remaining").asLong()).as(rule)
            .isEqualTo(window(acquire(rule, "user:7", 0)).get("remaining").asLong());
        if (!a.equals("leaky_bucket")) {
          assertThat(window(back).get("remaining").asLong()).as(rule).isEqualTo(1);
          assertThat(acquire(rule, "user:42", 1).get("allowed").asBoolean()).as(rule).isTrue();
          assertThat(acquire(rule, "user:42", 1).get("allowed").asBoolean()).as(rule).isFalse();
        } else {
          // Four slots of 12 s queued: the next request waits more than three would make it.
          assertThat(acquire(rule, "user:42", 1).get("waitMs").asLong()).as(rule).isGreaterThan(36_000);
        }
      }
    }
  }
}
