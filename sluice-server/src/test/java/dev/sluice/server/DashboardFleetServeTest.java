package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard's fleet and leases as an operator sees them, with {@code sluice serve} processes:
 * one on the memory store is alone; two sharing one Redis each count two instances and list both,
 * and one of them shows the key it holds a lease of.
 */
class DashboardFleetServeTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final String RULES = """
      limits:
        - name: hot
          mode: leased
          report_interval: 50ms
          lease_slack: 10%
          config:
            - limit: 100000
              period: 1h
        - name: plain
          config:
            - limit: 10
              period: 1h
      """;

  @TempDir
  Path dir;

  private static JsonNode dashboard(ServiceClient c) {
    try {
      HttpResponse<String> r = c.get("/v1/dashboard");
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return ServiceClient.json(r);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Polls the dashboard until {@code done} holds of an answer, at most 20 s; that answer. */
  private static JsonNode awaitDashboard(ServiceClient c, java.util.function.Predicate<JsonNode> done)
      throws InterruptedException {
    AtomicReference<JsonNode> last = new AtomicReference<>();
    try {
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(20), () -> {
        last.set(dashboard(c));
        return done.test(last.get());
      });
    } catch (AssertionError e) {
      throw new AssertionError("the dashboard's last answer: " + last.get(), e);
    }
    return last.get();
  }

  private ServeProcess serve(String name, String store) throws IOException {
    return ServeProcess.serve(dir.resolve(name + ".log"), "--config", dir.resolve("limits.yaml").toString(),
        "--store", store);
  }

  @Test
  void onTheMemoryStoreTheInstanceIsAlone() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    try (ServeProcess p = serve("memory", "memory")) {
      ServiceClient c = new ServiceClient(p.awaitPort());
      JsonNode fleet = dashboard(c).get("fleet");
      assertThat(fleet.get("live").asInt()).isEqualTo(1);
      assertThat(fleet.get("instances")).hasSize(1);
      JsonNode self = fleet.get("instances").get(0);
      assertThat(self.get("id").asText()).isEqualTo(fleet.get("self").asText())
          .startsWith(p.process.pid() + "-");
      assertThat(self.get("self").asBoolean()).isTrue();
      assertThat(self.get("lastHeartbeatAgeMs").asLong()).isZero();
      assertThat(fleet.get("more").asInt()).isZero();
    }
  }

  @Test
  void twoInstancesSharingOneRedisEachCountTwoAndListBothAndTheLeasedKeyShows() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    try (ServeProcess a = serve("a", redis.get().uri()); ServeProcess b = serve("b", redis.get().uri())) {
      List<ServiceClient> clients = List.of(new ServiceClient(a.awaitPort()), new ServiceClient(b.awaitPort()));
      List<String> selves = new ArrayList<>();
      for (ServiceClient c : clients) {
        JsonNode fleet = awaitDashboard(c, d -> d.get("fleet").get("live").asInt() == 2).get("fleet");
        assertThat(fleet.get("instances")).hasSize(2);
        assertThat(fleet.get("more").asInt()).isZero();
        for (JsonNode i : fleet.get("instances")) {
          assertThat(i.get("self").asBoolean()).isEqualTo(i.get("id").asText().equals(fleet.get("self").asText()));
          assertThat(i.get("lastHeartbeatAgeMs").asLong()).isBetween(0L, 3_000L);
        }
        selves.add(fleet.get("self").asText());
      }
      assertThat(selves.get(0)).startsWith(a.process.pid() + "-").isNotEqualTo(selves.get(1));
      assertThat(selves.get(1)).startsWith(b.process.pid() + "-");
      for (ServiceClient c : clients) {
        JsonNode listed = awaitDashboard(c, d -> d.get("fleet").get("instances").size() == 2).get("fleet");
        List<String> ids = new ArrayList<>();
        listed.get("instances").forEach(i -> ids.add(i.get("id").asText()));
        assertThat(ids).containsExactlyInAnyOrderElementsOf(selves);
      }

      // Traffic on the leased rule through a, until a holds units of the key: its report says so.
      ServiceClient c = clients.get(0);
      JsonNode leases = awaitDashboard(c, d -> {
        try {
          c.post("/v1/acquire", "{\"rule\":\"hot\",\"key\":\"user:1\",\"cost\":1}");
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        JsonNode rules = d.get("leases").get("rules");
        return rules != null && rules.get(0).get("keys").size() == 1
            && rules.get(0).get("keys").get(0).get("held").asLong() > 0;
      }).get("leases");
      assertThat(leases.get("leasedRules").asInt()).isEqualTo(1);
      assertThat(leases.get("reported").asBoolean()).isTrue();
      JsonNode rule = leases.get("rules").get(0);
      assertThat(rule.get("name").asText()).isEqualTo("hot");
      JsonNode key = rule.get("keys").get(0);
      assertThat(key.get("key").asText()).isEqualTo("user:1");
      assertThat(key.get("held").asLong()).isLessThanOrEqualTo(key.get("sizeInUse").asLong());
      assertThat(key.get("budget").asLong()).isEqualTo(10_000); // 10 % of 100,000
    }
  }
}
