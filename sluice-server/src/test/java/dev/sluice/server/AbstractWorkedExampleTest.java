package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.conformance.WorkedExample;
import dev.sluice.server.cli.Cli;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * docs/policies.md, "The whole set-up, worked through", done as its reader does: its YAML, read
 * from the page itself, served by {@code sluice serve} in a process of its own, and its four steps
 * walked over HTTP and with the {@code sluice} commands as the page writes them (plus
 * {@code --url}, the service's address). Subclasses choose the store.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractWorkedExampleTest {
  private static final String NET = "ip:198.51.100.0/24";
  private static final Duration SOON = Duration.ofSeconds(20);

  private Path dir;
  private ServeProcess serve;
  private ServiceClient client;
  private String url;

  /** The {@code --store} of {@code sluice serve}. */
  abstract String store();

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-worked-example");
    Files.writeString(dir.resolve("policies.yaml"), WorkedExample.yaml());
    serve = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.resolve("policies.yaml").toString(),
        "--store", store());
    int port = serve.awaitPort();
    client = new ServiceClient(port);
    url = "http://127.0.0.1:" + port;
  }

  @AfterAll
  void stop() throws Exception {
    if (serve != null) {
      serve.close();
    }
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    }
  }

  @Test
  void theFourStepsOfTheWorkedExampleHappenAsWritten() throws Exception {
    // 1. One operation counts against the user, the address's network and the global limit.
    HttpResponse<String> first = acquire("{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\","
        + "\"ip\":\"198.51.100.7\"}}");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    JsonNode items = ServiceClient.json(first).get("items");
    assertThat(keys(items)).containsExactly("per_user user:42", "per_ip " + NET, "global all");
    assertThat(remaining(items, "per_user")).isEqualTo(19);
    assertThat(remaining(items, "per_ip")).isEqualTo(29);
    assertThat(lines(cli("audit", "per_ip", NET))).containsExactly("VALUE", "42");

    // 2. User 42 pays: the tier applies, and what 42 used stays used.
    cli("limits", "set", "per_user", "user:42", "--tier", "premium");
    // A peek (cost 0) consumes nothing: it shows when the tier is applied.
    String peek = "{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\",\"ip\":\"198.51.100.7\"},"
        + "\"cost\":0}";
    awaitWithin(() -> limit(ServiceClient.json(acquire(peek)).get("items"), "per_user") == 100);
    HttpResponse<String> paid = acquire("{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\","
        + "\"ip\":\"198.51.100.7\"}}");
    assertThat(paid.statusCode()).as(paid.body()).isEqualTo(200);
    assertThat(remaining(ServiceClient.json(paid).get("items"), "per_user")).isEqualTo(98);

    // 3. A script on 198.51.100.9 retries in a loop: its tenth denial within a minute starts a
    // 15-minute ban; from then on it is answered `banned` with the time left.
    String script = "{\"operation\":\"auth.createToken\",\"attributes\":{\"ip\":\"198.51.100.9\"}}";
    List<String> outcomes = new ArrayList<>();
    JsonNode last = null;
    for (int i = 0; i < 20; i++) {
      HttpResponse<String> r = acquire(script);
      last = ServiceClient.json(r);
      outcomes.add(r.statusCode() + " " + reason(last.get("items"), "per_ip", "anonymous"));
    }
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      expected.add(i < 5 ? "200 none" : i < 15 ? "429 anonymous:limit_exceeded" : "429 per_ip:banned");
    }
    assertThat(outcomes).isEqualTo(expected);
    JsonNode ban = item(last.get("items"), "per_ip");
    assertThat(ban.get("key").asText()).isEqualTo(NET);
    assertThat(ban.get("blockedMs").asLong()).isBetween(Duration.ofMinutes(14).toMillis(), Duration.ofMinutes(15).toMillis());
    assertThat(last.get("retryAfterMs").asLong()).isEqualTo(ban.get("blockedMs").asLong());

    // 4. The operator looks: the most denied networks, the users behind one, lifts the ban early
    // and keeps the network out.
    awaitWithin(() -> cli("top", "--rule", "per_ip", "--minutes", "5").contains(NET));
    List<String> top = lines(cli("top", "--rule", "per_ip", "--minutes", "5"));
    assertThat(top.get(0)).startsWith("KEY");
    assertThat(top.get(1)).startsWith(NET);
    assertThat(lines(cli("audit", "per_ip", NET))).containsExactly("VALUE", "42");
    // The automatic ban is listed once its record is written (just after the decision that started it).
    awaitWithin(() -> cli("bans", "ls", "--rule", "per_ip").contains(NET));
    cli("bans", "rm", "per_ip", NET);
    JsonNode lifted = ServiceClient.json(acquire(script));
    assertThat(reason(lifted.get("items"), "per_ip", "anonymous")).isEqualTo("anonymous:limit_exceeded");
    assertThat(item(lifted.get("items"), "per_ip").has("reason")).isFalse();
    cli("lists", "add", "deny", "per_ip", NET);
    HttpResponse<String> out = acquire("{\"operation\":\"auth.createToken\",\"attributes\":{\"user\":\"42\","
        + "\"ip\":\"198.51.100.7\"}}");
    assertThat(out.statusCode()).isEqualTo(429);
    assertThat(reason(ServiceClient.json(out).get("items"), "per_ip")).isEqualTo("per_ip:deny_listed");
  }

  private HttpResponse<String> acquire(String body) throws Exception {
    return client.post("/v1/acquire", body);
  }

  /** Runs {@code sluice args --url <the service>}; what it printed, having checked it exited 0. */
  private String cli(String... args) {
    String[] all = new String[args.length + 2];
    System.arraycopy(args, 0, all, 0, args.length);
    all[args.length] = "--url";
    all[args.length + 1] = url;
    Cli.Run run = Cli.run(all);
    assertThat(run.exit()).as("sluice %s:%n%s", String.join(" ", args), run.all()).isZero();
    return run.out();
  }

  private static List<String> lines(String out) {
    return out.lines().map(String::strip).toList();
  }

  private static List<String> keys(JsonNode items) {
    List<String> out = new ArrayList<>();
    items.forEach(i -> out.add(i.get("rule").asText() + " " + i.get("key").asText()));
    return out;
  }

  private static JsonNode item(JsonNode items, String rule) {
    for (JsonNode i : items) {
      if (i.get("rule").asText().equals(rule)) {
        return i;
      }
    }
    throw new AssertionError("no item of " + rule + " in " + items);
  }

  private static long remaining(JsonNode items, String rule) {
    return item(items, rule).get("windows").get(0).get("remaining").asLong();
  }

  private static long limit(JsonNode items, String rule) {
    return item(items, rule).get("windows").get(0).get("limit").asLong();
  }

  /** The first of {@code rules} whose item has a reason, as "rule:reason", or "none". */
  private static String reason(JsonNode items, String... rules) {
    for (String rule : rules) {
      for (JsonNode i : items) {
        if (i.get("rule").asText().equals(rule) && i.has("reason")) {
          return rule + ":" + i.get("reason").asText();
        }
      }
    }
    return "none";
  }

  private static void awaitWithin(Callable<Boolean> condition) throws Exception {
    long deadline = System.nanoTime() + SOON.toNanos();
    while (!condition.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + SOON);
      }
      Thread.sleep(50);
    }
  }
}
