package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.SluiceService;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@code sluice limits|bans|lists|audit|top|leases} against a running service on a free port. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PolicyCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "cli-tok-19ab";
  private Path dir;
  private SluiceService service;
  private String url;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-cli-policies");
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config:
              - limit: 100
                period: 1h
          - name: hot
            mode: leased
            lease_slack: 10%
            config:
              - limit: 10000
                period: 1h
        """);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withAdminToken(TOKEN).withDrainTimeout(Duration.ofSeconds(1)), MemoryStore.create());
    url = "http://127.0.0.1:" + service.port();
  }

  @AfterAll
  void stop() throws Exception {
    service.close();
    Files.deleteIfExists(dir.resolve("limits.yaml"));
    Files.deleteIfExists(dir);
  }

  private Cli.Run run(String... args) {
    String[] all = new String[args.length + 4];
    System.arraycopy(args, 0, all, 0, args.length);
    all[args.length] = "--url";
    all[args.length + 1] = url;
    all[args.length + 2] = "--admin-token";
    all[args.length + 3] = TOKEN;
    return Cli.run(all);
  }

  private boolean keepsPolicies() {
    try {
      service.limiter().policies();
      return true;
    } catch (UnsupportedOperationException e) {
      return false;
    }
  }

  @Test
  void limitsAreSetShownListedAndRemovedAsTablesOrJson() throws Exception {
    assumeTrue(keepsPolicies(), "the limiter keeps no policies yet");
    Cli.Run set = run("limits", "set", "api", "user:42", "--window", "10/1m", "--window", "100/1h");
    assertThat(set.exit()).as(set.all()).isZero();
    assertThat(set.outLines()).containsExactly("RULE  KEY      LIMIT", "api   user:42  10/1m, 100/1h");

    Cli.Run slash = run("limits", "set", "api", "path/to", "--window", "5/1m");
    assertThat(slash.exit()).as(slash.all()).isZero();
    Cli.Run get = run("limits", "get", "api", "path/to", "--json");
    assertThat(JSON.readTree(get.out()).get("key").asText()).isEqualTo("path/to");

    Cli.Run ls = run("limits", "ls", "--rule", "api", "--count", "1");
    assertThat(ls.exit()).as(ls.all()).isZero();
    assertThat(ls.outLines()).hasSize(3).last().asString().startsWith("(more: --after ");
    Cli.Run all = run("limits", "ls", "--all", "--count", "1", "--json");
    JsonNode page = JSON.readTree(all.out());
    assertThat(page.get("items")).extracting(n -> n.get("key").asText()).containsExactly("path/to", "user:42");
    assertThat(page.get("next").isNull()).isTrue();

    Cli.Run rm = run("limits", "rm", "api", "user:42");
    assertThat(rm.exit()).as(rm.all()).isZero();
    Cli.Run again = run("limits", "rm", "api", "user:42");
    assertThat(again.exit()).isEqualTo(1);
    assertThat(again.err()).contains("not_found");
    assertThat(run("limits", "get", "api", "user:42").exit()).isEqualTo(1);
  }

  @Test
  void bansAreSetForADurationShownListedAndLifted() throws Exception {
    assumeTrue(keepsPolicies(), "the limiter keeps no policies yet");
    Cli.Run set = run("bans", "set", "api", "ip:2001:db8::1", "--for", "15m");
    assertThat(set.exit()).as(set.all()).isZero();
    assertThat(set.outLines().get(0)).startsWith("RULE").contains("UNTIL").contains("LEFT");
    assertThat(set.outLines().get(1)).contains("ip:2001:db8::1").contains("manual");
    Cli.Run ls = run("bans", "ls", "--json");
    assertThat(JSON.readTree(ls.out()).get("items")).extracting(n -> n.get("key").asText()).contains("ip:2001:db8::1");
    assertThat(run("bans", "rm", "api", "ip:2001:db8::1").exit()).isZero();
    assertThat(run("bans", "get", "api", "ip:2001:db8::1").exit()).isEqualTo(1);
  }

  @Test
  void listEntriesWithCidrRangesAreAddedListedAndRemoved() throws Exception {
    assumeTrue(keepsPolicies(), "the limiter keeps no policies yet");
    Cli.Run add = run("lists", "add", "deny", "api", "ip:10.0.0.0/8");
    assertThat(add.exit()).as(add.all()).isZero();
    Cli.Run ls = run("lists", "ls", "deny", "api");
    assertThat(ls.outLines()).containsExactly("ENTRY", "ip:10.0.0.0/8");
    // Without a rule: every rule's entries of the list, by rule then entry.
    assertThat(run("lists", "add", "deny", "hot", "tenant:7").exit()).isZero();
    assertThat(run("lists", "add", "allow", "hot", "tenant:1").exit()).isZero();
    Cli.Run every = run("lists", "ls", "deny");
    assertThat(every.exit()).as(every.all()).isZero();
    assertThat(every.outLines()).extracting(l -> List.of(l.trim().split("\\s+")))
        .containsExactly(List.of("RULE", "ENTRY"), List.of("api", "ip:10.0.0.0/8"), List.of("hot", "tenant:7"));
    assertThat(run("lists", "rm", "deny", "hot", "tenant:7").exit()).isZero();
    assertThat(run("lists", "rm", "allow", "hot", "tenant:1").exit()).isZero();
    assertThat(run("lists", "rm", "deny", "api", "ip:10.0.0.0/8").exit()).isZero();
    assertThat(run("lists", "rm", "deny", "api", "ip:10.0.0.0/8").exit()).isEqualTo(1);
    Cli.Run bad = run("lists", "add", "deny", "api", "ip:10.0.0.0/99");
    assertThat(bad.exit()).as(bad.all()).isEqualTo(2);
    assertThat(bad.err()).contains("invalid_entry");
  }

  @Test
  void auditAndTopPrintTablesEvenWhenNothingWasRecorded() throws Exception {
    assumeTrue(keepsPolicies(), "the limiter keeps no policies yet");
    Cli.Run audit = run("audit", "api", "ip:10.0.0.1");
    assertThat(audit.exit()).as(audit.all()).isZero();
    assertThat(audit.outLines()).containsExactly("VALUE");
    Cli.Run top = run("top", "--rule", "api", "--minutes", "5");
    assertThat(top.exit()).as(top.all()).isZero();
    assertThat(top.outLines()).containsExactly("KEY  DENIALS  ERROR");
    Cli.Run json = run("top", "--rule", "api", "--json");
    assertThat(JSON.readTree(json.out()).get("minutes").asInt()).isEqualTo(5);
  }

  @Test
  void leasesShowTheKeysOfALeasedRuleAndTheInstancesOfOneKey() throws Exception {
    HttpResponse<String> acquired = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url
        + "/v1/acquire")).POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"hot\",\"key\":\"all\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(acquired.statusCode()).isEqualTo(200);
    // The service's first usage report goes within its keeper's first round.
    Cli.Run keys = run("leases", "--rule", "hot");
    for (int i = 0; i < 200 && keys.outLines().size() < 2; i++) {
      Thread.sleep(20);
      keys = run("leases", "--rule", "hot");
    }
    assertThat(keys.exit()).as(keys.all()).isZero();
    assertThat(keys.outLines().get(0)).startsWith("KEY").contains("INSTANCES").contains("ADMITTED").contains("HELD");
    assertThat(keys.outLines()).hasSize(2);
    assertThat(keys.outLines().get(1)).startsWith("all ");
    Cli.Run one = run("leases", "--rule", "hot", "--key", "all");
    assertThat(one.exit()).as(one.all()).isZero();
    assertThat(one.outLines().get(0)).startsWith("INSTANCE").contains("INTERVAL_MS");
    assertThat(one.outLines()).hasSize(2);
    Cli.Run json = run("leases", "--rule", "hot", "--key", "all", "--json");
    assertThat(JSON.readTree(json.out()).get("total").get("instances").asInt()).isEqualTo(1);
    Cli.Run exact = run("leases", "--rule", "api");
    assertThat(exact.exit()).as(exact.all()).isEqualTo(2);
    assertThat(exact.err()).contains("not_leased").contains("'api' is not leased");
  }

  @Test
  void mistakesInWhatWasGivenExitWith2NamingThem() {
    Cli.Run rule = run("limits", "set", "nope", "k", "--window", "10/1m");
    assertThat(rule.exit()).as(rule.all()).isEqualTo(2);
    assertThat(rule.err()).contains("unknown_rule").contains("nope");
    Cli.Run window = run("limits", "set", "api", "k", "--window", "ten/1m");
    assertThat(window.exit()).isEqualTo(2);
    assertThat(window.err()).contains("--window 'ten/1m'");
    Cli.Run both = run("limits", "set", "api", "k", "--window", "10/1m", "--tier", "gold");
    assertThat(both.exit()).isEqualTo(2);
    Cli.Run kind = run("lists", "add", "grey", "api", "k");
    assertThat(kind.exit()).isEqualTo(2);
    assertThat(kind.err()).contains("'allow' or 'deny'");
    Cli.Run url = Cli.run("limits", "get", "api", "k", "--url", "ftp://x");
    assertThat(url.exit()).isEqualTo(2);
  }

  @Test
  void aWrongOrMissingAdminTokenExitsWith2AndNeverPrintsTheToken() {
    Cli.Run none = Cli.run("limits", "ls", "--url", url);
    assertThat(none.exit()).as(none.all()).isEqualTo(2);
    assertThat(none.err()).contains("unauthorized");
    Cli.Run wrong = Cli.run("bans", "ls", "--url", url, "--admin-token", "guess");
    assertThat(wrong.exit()).isEqualTo(2);
    assertThat(wrong.all()).doesNotContain(TOKEN);
  }

  @Test
  void aServiceThatCannotBeReachedExitsWith3() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Cli.Run r = Cli.run("limits", "ls", "--url", "http://127.0.0.1:" + port);
    assertThat(r.exit()).isEqualTo(3);
    assertThat(r.err()).contains("cannot reach the service at http://127.0.0.1:" + port);
  }
}
