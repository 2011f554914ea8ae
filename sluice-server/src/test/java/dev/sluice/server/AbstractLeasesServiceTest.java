package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.internal.lease.UsageReport;
import dev.sluice.spi.LeaseBoard;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Leased mode seen through the service: a decision answered from a lease says {@code "leased":
 * true}, and {@code GET /v1/leases} shows a key across the instances leasing it: two limiters
 * built with {@code Sluice.builder()} on the service's store, whose report intervals run on a fake
 * clock so that what each admitted in its last interval is known exactly. Subclasses choose the
 * store.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractLeasesServiceTest {
  /** 10,000 an hour, 10 % slack: a budget of 1,000 units. A report a minute: the test sets the pace. */
  static final String RULES = """
      limits:
        - name: hot
          mode: leased
          lease_length: 30m
          report_interval: 50ms
          lease_slack: 10%
          config:
            - limit: 10000
              period: 1h
        - name: many
          mode: leased
          lease_slack: 10%
          config:
            - limit: 10000
              period: 1h
        - name: plain
          config:
            - limit: 10
              period: 1h
      """;
  /**
   * The other instances' rule: the service's but for its report interval, which runs on the fake
   * clock here. The service reports on the real clock every 50 ms, so that when it leads (whoever
   * finds no leader first does) it sizes the others within the test's time.
   */
  static final Rule HOT = Rule.builder("hot").window(10_000, Duration.ofHours(1))
      .lease(new LeasePolicy(Duration.ofMinutes(30), Duration.ofMinutes(1), 0.1)).build();

  Path dir;
  SluiceService service;
  ServiceClient client;
  final FakeTicker ticker = new FakeTicker();
  final List<RateLimiter> limiters = new ArrayList<>();

  /** The service's store. */
  protected abstract Store newStore() throws Exception;

  /** A store for another instance, on the same state as the service's {@link #newStore()}. */
  protected abstract Store sameStateAs(Store serviceStore) throws Exception;

  Store serviceStore;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sluice-leases");
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    serviceStore = newStore();
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), serviceStore);
    client = new ServiceClient(service.port());
  }

  @AfterEach
  void closeLimiters() {
    limiters.forEach(RateLimiter::close);
    limiters.clear();
  }

  @AfterAll
  void stop() throws IOException {
    if (service != null) {
      service.close();
    }
    Files.deleteIfExists(dir.resolve("limits.yaml"));
    Files.deleteIfExists(dir);
  }

  /** Another instance: a limiter as users build it, on the service's store, on the fake clock. */
  RateLimiter instance() throws Exception {
    RateLimiter l = Sluice.builder().rules(HOT).store(sameStateAs(serviceStore)).ticker(ticker).sleeper(ticker)
        .build();
    limiters.add(l);
    return l;
  }

  static String key() {
    return "k" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  }

  JsonNode leases(String query) {
    try {
      HttpResponse<String> r = client.get("/v1/leases?" + query);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return ServiceClient.json(r);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Acquires through the service until an answer comes from its lease; whether one did. */
  boolean acquireThroughTheServiceUntilLeased(String key) throws Exception {
    boolean leased = false;
    for (int i = 0; i < 200 && !leased; i++) {
      HttpResponse<String> r = client.post("/v1/acquire", "{\"rule\":\"hot\",\"key\":\"" + key + "\"}");
      assertThat(r.statusCode()).isEqualTo(200);
      JsonNode item = ServiceClient.json(r).get("items").get(0);
      if (item.has("leased")) {
        assertThat(item.get("leased").asBoolean()).isTrue();
        assertThat(item.get("windows").get(0).get("remaining").asLong()).isBetween(0L, 10_000L);
        leased = true;
      } else {
        Thread.sleep(5); // the service's first take is on its way
      }
    }
    return leased;
  }

  @Test
  void aDecisionFromTheServicesLeaseSaysLeasedAndOneTheStoreMadeDoesNot() throws Exception {
    String key = key();
    assertThat(acquireThroughTheServiceUntilLeased(key)).isTrue();
    // A peek is the store's: no "leased" field, as in every answer before leased mode.
    JsonNode peek = ServiceClient.json(client.post("/v1/acquire", "{\"rule\":\"hot\",\"key\":\"" + key
        + "\",\"cost\":0}")).get("items").get(0);
    assertThat(peek.has("leased")).isFalse();
    JsonNode exact = ServiceClient.json(client.post("/v1/acquire", "{\"rule\":\"plain\",\"key\":\"" + key + "\"}"));
    assertThat(exact.get("items").get(0).has("leased")).isFalse();
  }

  @Test
  void aKeyWithALiveLimitIsLeasedAndShownWithItsBudget() throws Exception {
    String key = key();
    // 500 an hour for this key: its budget is 10 % of that, not of the rule's 10,000.
    HttpResponse<String> set = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
        client.uri("/v1/limits/hot/" + key)).PUT(java.net.http.HttpRequest.BodyPublishers.ofString(
            "{\"windows\":[{\"limit\":500,\"period\":\"1h\"}]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
    assertThat(acquireThroughTheServiceUntilLeased(key)).isTrue();
    JsonNode item = ServiceClient.json(client.post("/v1/acquire", "{\"rule\":\"hot\",\"key\":\"" + key + "\"}"))
        .get("items").get(0);
    assertThat(item.get("windows").get(0).get("limit").asLong()).isEqualTo(500);
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(20),
        () -> leases("rule=hot&key=" + key).get("instances").size() == 1);
    assertThat(leases("rule=hot&key=" + key).get("budget").asLong()).isEqualTo(50);
    JsonNode row = null;
    for (JsonNode k : leases("rule=hot").get("keys")) {
      if (k.get("key").asText().equals(key)) {
        row = k;
      }
    }
    assertThat(row).isNotNull();
    assertThat(row.get("budget").asLong()).isEqualTo(50);
    // Whatever the leader has sized it to by now (the service's last report may predate a size),
    // never beyond the live limit's budget.
    assertThat(row.get("sizeInUse").asLong()).isBetween(0L, 50L);
  }

  @Test
  void theLeasesOfAKeyShowEachInstanceWithWhatItAdmittedInItsLastInterval() throws Exception {
    String key = key();
    RateLimiter a = instance();
    RateLimiter b = instance();
    a.acquire("hot", key);
    b.acquire("hot", key);
    // Each instance's first report goes at its keeper's first round, which may come before or
    // after that first admission; then none until its clock moves a report interval on.
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(20),
        () -> leases("rule=hot&key=" + key).get("instances").size() == 2);
    // One instance leads (the first to find no leader); a new leader republishes the sizes in use
    // for its first cycles and sizes by demand after: some intervals with demand on both, each of
    // another length so that the wait knows the reports of each.
    for (int m = 1; m <= 8; m++) {
      a.acquire("hot", key);
      b.acquire("hot", key);
      ticker.advance(Duration.ofSeconds(60 + m));
      awaitIntervals(key, (60 + m) * 1000L);
    }
    ticker.advance(Duration.ofMinutes(1));
    awaitIntervals(key, 60_000);
    // From here what each admits goes in its next report, sent when the clock moves on again.
    int byA = leasedAdmissions(a, key, 20);
    int byB = leasedAdmissions(b, key, 35);
    assertThat(byA).isPositive();
    assertThat(byB).isGreaterThan(byA);
    ticker.advance(Duration.ofMinutes(2));
    JsonNode view = awaitIntervals(key, 120_000);
    assertThat(view.get("instances")).extracting(r -> r.get("admitted").asLong())
        .containsExactlyInAnyOrder((long) byA, (long) byB);
    // Every request of the interval was admitted from the lease or sent to the store (a moment
    // with too few units held): together, what each instance asked.
    assertThat(view.get("instances")).extracting(r -> r.get("admitted").asLong() + r.get("sentToStore").asLong())
        .containsExactlyInAnyOrder(20L, 35L);
    assertThat(view.get("rule").asText()).isEqualTo("hot");
    assertThat(view.get("key").asText()).isEqualTo(key);
    assertThat(view.get("budget").asLong()).isEqualTo(1000);
    assertThat(view.get("leader").isNull()).isFalse(); // the first to report found none and campaigned
    long admitted = 0;
    long held = 0;
    for (JsonNode row : view.get("instances")) {
      assertThat(row.get("instance").asText()).isNotEmpty();
      assertThat(row.get("sizeInUse").asLong()).isBetween(1L, 1000L);
      assertThat(row.get("held").asLong()).isBetween(0L, 1000L);
      admitted += row.get("admitted").asLong();
      held += row.get("held").asLong();
    }
    JsonNode total = view.get("total");
    assertThat(total.get("instances").asInt()).isEqualTo(2);
    assertThat(total.get("admitted").asLong()).isEqualTo(admitted);
    assertThat(total.get("held").asLong()).isEqualTo(held);
    assertThat(view.get("truncated").asBoolean()).isFalse();
    assertThat(view.get("partial").asBoolean()).isFalse();
    assertThat(view.get("unreadable").asInt()).isZero();
    assertThat(view.get("reports").asInt()).isGreaterThanOrEqualTo(2);

    // The rule's keys, summed over the instances.
    JsonNode rule = leases("rule=hot");
    JsonNode row = null;
    for (JsonNode k : rule.get("keys")) {
      if (k.get("key").asText().equals(key)) {
        row = k;
      }
    }
    assertThat(row).as(rule.toString()).isNotNull();
    assertThat(row.get("instances").asInt()).isEqualTo(2);
    assertThat(row.get("admitted").asLong()).isEqualTo((long) byA + byB);
    assertThat(row.get("budget").asLong()).isEqualTo(1000);
    assertThat(rule.get("total").get("keys").asInt()).isEqualTo(rule.get("keys").size());
    assertThat(rule.has("key")).isFalse();
  }

  /** Acquires {@code n} times; how many of them were answered from the instance's lease. */
  static int leasedAdmissions(RateLimiter l, String key, int n) {
    int leased = 0;
    for (int i = 0; i < n; i++) {
      var item = l.acquire("hot", key).items().get(0);
      assertThat(item.allowed()).isTrue();
      leased += item.leased() ? 1 : 0;
    }
    return leased;
  }

  /** The key's view once both instances' last reports cover {@code ms} of the fake clock. */
  JsonNode awaitIntervals(String key, long ms) throws InterruptedException {
    AtomicReference<JsonNode> seen = new AtomicReference<>();
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(20), () -> {
      seen.set(leases("rule=hot&key=" + key));
      int n = 0;
      for (JsonNode row : seen.get().get("instances")) {
        n += row.get("intervalMs").asLong() == ms ? 1 : 0;
      }
      return n == 2;
    });
    return seen.get();
  }

  @Test
  void theRulesKeysAreSummedMostDemandFirstAndAtMostAThousandAreAnswered() throws Exception {
    // Five instances' reports of 300 keys each, and one in a format this version does not read.
    LeaseBoard board = serviceStore.leaseBoard().orElseThrow();
    for (int i = 0; i < 5; i++) {
      List<UsageReport.Entry> entries = new ArrayList<>();
      for (int j = 0; j < 300; j++) {
        entries.add(new UsageReport.Entry("many", "k" + (i * 300 + j), j, 0, 2, 1));
      }
      UsageReport.Encoded e = new UsageReport(100, 0, entries).encode(LeaseBoard.MAX_ENTRY_BYTES);
      assertThat(e.entries()).isEqualTo(300);
      board.report("other-" + i, e.bytes(), 60_000).toCompletableFuture().get();
    }
    board.report("other-version", new byte[] {9}, 60_000).toCompletableFuture().get();

    JsonNode rule = leases("rule=many");
    assertThat(rule.get("keys")).hasSize(1000);
    assertThat(rule.get("truncated").asBoolean()).isTrue();
    assertThat(rule.get("unreadable").asInt()).isEqualTo(1);
    assertThat(rule.get("reports").asInt()).isGreaterThanOrEqualTo(6);
    JsonNode total = rule.get("total");
    assertThat(total.get("keys").asInt()).isEqualTo(1500);
    assertThat(total.get("admitted").asLong()).isEqualTo(5 * (299 * 300 / 2));
    assertThat(total.get("held").asLong()).isEqualTo(1500);
    // Most demand first, then by key: the five keys that admitted 299 lead.
    assertThat(rule.get("keys").get(0).get("key").asText()).isEqualTo("k1199");
    assertThat(rule.get("keys").get(4).get("key").asText()).isEqualTo("k899");
    assertThat(rule.get("keys").get(999).get("admitted").asLong()).isEqualTo(100);

    JsonNode one = leases("rule=many&key=k305");
    assertThat(one.get("instances")).hasSize(1);
    JsonNode row = one.get("instances").get(0);
    assertThat(row.get("instance").asText()).isEqualTo("other-1");
    assertThat(row.get("admitted").asLong()).isEqualTo(5);
    assertThat(row.get("intervalMs").asLong()).isEqualTo(100);
    assertThat(row.get("sizeInUse").asLong()).isEqualTo(2);
    assertThat(row.get("held").asLong()).isEqualTo(1);
    assertThat(one.get("truncated").asBoolean()).isFalse();
  }

  @Test
  void aReadOfTheBoardIsRefusedWithWhatIsWrong() throws Exception {
    refused("rule=plain", "not_leased", "'plain' is not leased");
    refused("rule=nope", "unknown_rule", "'nope'");
    refused("", "invalid_request", "'rule' is required");
    refused("rule=hot&key=", "invalid_key", "'key'");
    refused("rule=hot&who=me", "invalid_request", "'who'");
    refused("rule=hot&rule=hot", "invalid_request", "more than once");
  }

  void refused(String query, String code, String message) throws Exception {
    HttpResponse<String> r = client.get("/v1/leases?" + query);
    assertThat(r.statusCode()).as(query).isEqualTo(400);
    JsonNode error = ServiceClient.json(r).get("error");
    assertThat(error.get("code").asText()).as(query).isEqualTo(code);
    assertThat(error.get("message").asText()).as(query).contains(message);
  }
}
