package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Algorithm;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.cli.Cli.Run;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.RedisDeployment;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice keys} against a real deployment, written by the real Redis store. Each topology
 * runs these tests by subclassing.
 */
abstract class KeysCommandContract {
  static final String CONFIG = """
      limits:
        - name: auth.login
          config: [{limit: 5, period: 10s}, {limit: 20, period: 1m}]
        - name: search
          algorithm: sliding_window
          config: [{limit: 100, period: 1h}]
        - name: mail
          algorithm: leaky_bucket
          max_wait: 30s
          config: [{limit: 1, period: 1s}]
      """;

  /** The configuration's rules, and one the configuration no longer has. */
  static final RuleSet WRITTEN = RuleSet.of(
      Rule.builder("auth.login").window(5, Duration.ofSeconds(10)).window(20, Duration.ofMinutes(1)).build(),
      Rule.builder("search").algorithm(Algorithm.SLIDING_WINDOW).window(100, Duration.ofHours(1)).build(),
      Rule.builder("mail").algorithm(Algorithm.LEAKY_BUCKET).maxWait(Duration.ofSeconds(30))
          .window(1, Duration.ofSeconds(1)).build(),
      Rule.builder("retired.rule").window(1, Duration.ofMinutes(1)).build());

  /** Keys of every shape the escaping must survive: braces, percent, bar, non-ASCII. */
  static final List<String> USER_KEYS = List.of("user:0", "user:1", "user:}{%|x", "ключ", "ip:10.0.0.1", "user:5",
      "user:6", "user:7", "user:8", "user:9");

  /** Names outside the prefix, all without a TTL: none may change. */
  static final List<String> FOREIGN = List.of("app:session:1", "app:session:2", "sluicy", "Sluice:{auth.login|x}",
      "sluice-{auth.login|x}");

  /** Names under the prefix that the store does not write, without a TTL: never changed either. */
  static final List<String> NOT_SLUICE = List.of("sluice:legacy", "sluice:{broken");

  @TempDir
  Path dir;

  String config;
  /** Rule → the store's Redis key names of that rule. */
  final Map<String, List<String>> names = new LinkedHashMap<>();
  /** The store's keys made persistent. */
  final List<String> persisted = new ArrayList<>();

  abstract RedisDeployment deployment();

  /** Commands routed to the node holding each key. */
  abstract RedisClusterCommands<String, String> redis();

  abstract int masters();

  @BeforeEach
  void writeKeysThroughTheStore() throws IOException {
    config = Files.writeString(dir.resolve("limits.yaml"), CONFIG).toString();
    names.clear();
    persisted.clear();
    RedisStore store = RedisStore.connect(deployment().uri());
    // Closing the limiter closes its store.
    try (RateLimiter limiter = Sluice.builder().rules(WRITTEN).store(store).build()) {
      int[] keysPerRule = {10, 5, 3, 2};
      int r = 0;
      for (Rule rule : WRITTEN.rules()) {
        List<String> ruleNames = new ArrayList<>();
        for (int i = 0; i < keysPerRule[r]; i++) {
          assertThat(limiter.acquire(rule.name(), USER_KEYS.get(i)).allowed()).isTrue();
          ruleNames.add(store.keyName(rule.name(), USER_KEYS.get(i)));
        }
        names.put(rule.name(), ruleNames);
        r++;
      }
    }
    // A leaky bucket's key may expire 2 s after its write; the test's own checks must not race it.
    for (String n : names.get("mail")) {
      redis().pexpire(n, 600_000);
    }
    persist("auth.login", 0);
    persist("auth.login", 2);
    persist("search", 0);
    persist("mail", 1);
    persist("retired.rule", 0);
    for (String f : FOREIGN) {
      redis().set(f, "x");
    }
    for (String n : NOT_SLUICE) {
      redis().set(n, "x");
    }
  }

  private void persist(String rule, int i) {
    String n = names.get(rule).get(i);
    assertThat(redis().persist(n)).isTrue();
    persisted.add(n);
  }

  Run keys(String... args) {
    String[] all = new String[args.length + 3];
    all[0] = "keys";
    System.arraycopy(args, 0, all, 1, args.length);
    all[args.length + 1] = "--store";
    all[args.length + 2] = deployment().uri();
    return Cli.run(all);
  }

  long bytes(List<String> keys) {
    long sum = 0;
    for (String k : keys) {
      sum += redis().memoryUsage(k);
    }
    return sum;
  }

  @Test
  void statsCountsKeysTtlsAndMemoryPerRuleReadFromTheKeyNames() {
    long keysBefore = deployment().commandCalls("keys");
    Run r = keys("stats", "--json", "--batch", "3");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode report = ReplayCommandTest.json(r.out());
    assertThat(report.get("nodes").asInt()).isEqualTo(masters());
    assertThat(report.get("prefix").asText()).isEqualTo("sluice:");
    Map<String, Long> noTtl = Map.of("auth.login", 2L, "search", 1L, "mail", 1L, "retired.rule", 1L);
    List<String> order = new ArrayList<>();
    long previousBytes = Long.MAX_VALUE;
    for (JsonNode row : report.get("rules")) {
      String rule = row.get("rule").asText();
      order.add(rule);
      List<String> ruleNames = names.get(rule);
      long bytes = bytes(ruleNames);
      assertThat(row.get("keys").asLong()).as(rule).isEqualTo(ruleNames.size());
      assertThat(row.get("noTtl").asLong()).as(rule).isEqualTo(noTtl.get(rule));
      assertThat(row.get("bytes").asLong()).as(rule).isEqualTo(bytes);
      assertThat(row.get("avgBytes").asLong()).as(rule).isEqualTo(Math.round((double) bytes / ruleNames.size()));
      assertThat(bytes).as("largest first").isLessThanOrEqualTo(previousBytes);
      previousBytes = bytes;
    }
    assertThat(order).containsExactlyInAnyOrder("auth.login", "search", "mail", "retired.rule");
    JsonNode other = report.get("other");
    assertThat(other.get("keys").asLong()).isEqualTo(NOT_SLUICE.size());
    assertThat(other.get("noTtl").asLong()).isEqualTo(NOT_SLUICE.size());
    assertThat(other.get("bytes").asLong()).isEqualTo(bytes(NOT_SLUICE));
    assertThat(report.get("keys").asLong()).isEqualTo(20 + NOT_SLUICE.size());
    assertThat(report.get("noTtl").asLong()).isEqualTo(5 + NOT_SLUICE.size());
    assertThat(deployment().commandCalls("keys")).as("KEYS is never sent").isEqualTo(keysBefore);
    assertThat(deployment().commandCalls("scan")).isPositive();
  }

  @Test
  void theBansAndAuditListsBesideAKeysStateAreNeitherTakenForStateNorChanged() {
    Rule guarded = Rule.builder("guarded").window(1, Duration.ofMinutes(1))
        .ban(new BanPolicy(1, Duration.ofMinutes(1), Duration.ofMinutes(5))).audit(new AuditPolicy(3, "user")).build();
    String state;
    try (RedisStore store = RedisStore.connect(deployment().uri())) {
      for (String user : List.of("alice", "bob")) {
        store.decideSync(new Batch(List.of(new ResolvedItem(guarded, "k", 1, guarded.windows(), user)),
            Request.STORE_CLOCK));
      }
      state = store.keyName("guarded", "k");
    }
    assertThat(redis().exists(state, state + ":ban", state + ":audit")).isEqualTo(3);
    // A ban key without a TTL (an operator's PERSIST) is reported, and still left alone.
    assertThat(redis().persist(state + ":ban")).isTrue();

    Run stats = keys("stats", "--json");
    assertThat(stats.exit()).as(stats.err()).isZero();
    JsonNode report = ReplayCommandTest.json(stats.out());
    for (JsonNode row : report.get("rules")) {
      if (row.get("rule").asText().equals("guarded")) {
        assertThat(row.get("keys").asLong()).as("the state key alone").isEqualTo(1);
      }
    }
    assertThat(report.get("policy").get("keys").asLong()).isEqualTo(2);
    assertThat(report.get("policy").get("noTtl").asLong()).isEqualTo(1);
    assertThat(report.get("other").get("keys").asLong()).isEqualTo(NOT_SLUICE.size());
    assertThat(keys("stats").out()).contains(KeysStatsCommand.POLICY);

    Run fix = keys("fix-ttl", "--ttl", "1h", "--json");
    assertThat(fix.exit()).as(fix.err()).isZero();
    JsonNode fixed = ReplayCommandTest.json(fix.out());
    assertThat(fixed.get("policy").get("noTtl").asLong()).isEqualTo(1);
    assertThat(redis().pttl(state + ":ban")).isEqualTo(-1);
    assertThat(redis().pttl(state + ":audit")).isPositive();
  }

  @Test
  void thePolicyRecordsAndHeartbeatsUnderThePoliciesTagAreNeitherTakenForStateNorChanged() {
    // A live limit's record (no TTL, by design) and an instance's heartbeat (with one).
    String records = "sluice:{policies}:limit";
    String instances = "sluice:{policies}:instances";
    redis().hset(records, "search user:1", "0 tier:gold");
    redis().zadd(instances, 1, "i1");
    redis().pexpire(instances, 60_000);
    try {
      JsonNode report = ReplayCommandTest.json(keys("stats", "--json").out());
      assertThat(report.get("policy").get("keys").asLong()).isEqualTo(2);
      assertThat(report.get("policy").get("noTtl").asLong()).isEqualTo(1);
      assertThat(report.get("other").get("keys").asLong()).isEqualTo(NOT_SLUICE.size());

      JsonNode fixed = ReplayCommandTest.json(keys("fix-ttl", "--ttl", "1h", "--json").out());
      assertThat(fixed.get("policy").get("noTtl").asLong()).isEqualTo(1);
      assertThat(redis().pttl(records)).isEqualTo(-1);
      assertThat(redis().pttl(instances)).isBetween(1L, 60_000L);
    } finally {
      redis().del(records, instances);
    }
  }

  @Test
  void statsPrintsATableLargestFirst() {
    Run r = keys("stats");
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> lines = r.outLines();
    assertThat(lines.get(0)).isEqualTo(deployment().uri() + ", prefix 'sluice:': 22 keys on "
        + (masters() == 1 ? "1 node" : masters() + " nodes"));
    assertThat(lines.get(1)).matches("rule +keys +no TTL +bytes +avg bytes");
    long login = bytes(names.get("auth.login"));
    assertThat(lines).contains(String.format(Locale.ROOT, "%-18s  %12s  %10s  %14s  %10s", "auth.login", "10", "2",
        String.format(Locale.ROOT, "%,d", login), Math.round(login / 10.0)));
    assertThat(lines.get(lines.size() - 2)).startsWith("(not a Sluice key)    ");
    assertThat(lines.get(lines.size() - 1)).startsWith("total  ").contains(" 22 ");
    assertThat(lines).hasSize(2 + 4 + 2);
  }

  @Test
  void fixTtlGivesConfiguredRulesTheirLongestWindowAndTouchesNothingElse() {
    Map<String, Long> ttlsBefore = new LinkedHashMap<>();
    names.values().forEach(ns -> ns.forEach(n -> ttlsBefore.put(n, redis().pttl(n))));
    Run r = keys("fix-ttl", "--config", config, "--json", "--batch", "2");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode report = ReplayCommandTest.json(r.out());
    assertThat(report.get("fixed").asLong()).isEqualTo(4);
    assertThat(report.get("dryRun").asBoolean()).isFalse();
    assertThat(report.get("rules").toString()).isEqualTo("[{\"rule\":\"auth.login\",\"fixed\":2,\"ttlMs\":61000},"
        + "{\"rule\":\"mail\",\"fixed\":1,\"ttlMs\":32000},{\"rule\":\"search\",\"fixed\":1,\"ttlMs\":3961000}]");
    assertThat(report.get("leftAlone").toString()).isEqualTo("[{\"rule\":\"retired.rule\",\"keys\":1}]");
    assertThat(report.get("other").get("noTtl").asLong()).isEqualTo(NOT_SLUICE.size());

    assertThat(redis().pttl(names.get("auth.login").get(0))).isBetween(50_000L, 61_000L);
    assertThat(redis().pttl(names.get("auth.login").get(2))).isBetween(50_000L, 61_000L);
    assertThat(redis().pttl(names.get("search").get(0))).isBetween(3_950_000L, 3_961_000L);
    assertThat(redis().pttl(names.get("mail").get(1))).isBetween(20_000L, 32_000L);
    assertThat(redis().pttl(names.get("retired.rule").get(0))).isEqualTo(-1);
    for (String n : ttlsBefore.keySet()) {
      if (!persisted.contains(n)) {
        assertThat(redis().pttl(n)).as("%s kept its own TTL", n).isPositive().isLessThanOrEqualTo(ttlsBefore.get(n));
      }
    }
    for (String n : FOREIGN) {
      assertThat(redis().pttl(n)).as(n).isEqualTo(-1);
    }
    for (String n : NOT_SLUICE) {
      assertThat(redis().pttl(n)).as(n).isEqualTo(-1);
    }

    Run again = keys("fix-ttl", "--config", config, "--json");
    assertThat(ReplayCommandTest.json(again.out()).get("fixed").asLong()).isZero();
  }

  @Test
  void fixTtlGivesOtherRulesTheTtlOption() {
    Run r = keys("fix-ttl", "--config", config, "--ttl", "2h");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.outLines()).contains("fixed 5 keys", "  retired.rule                   1  TTL 7200s");
    assertThat(redis().pttl(names.get("retired.rule").get(0))).isBetween(7_190_000L, 7_200_000L);
    assertThat(redis().pttl(names.get("auth.login").get(0))).isBetween(50_000L, 61_000L);
    for (String n : FOREIGN) {
      assertThat(redis().pttl(n)).as(n).isEqualTo(-1);
    }
  }

  @Test
  void fixTtlWithoutAConfigurationGivesEveryStoreKeyTheTtlOption() {
    Run r = keys("fix-ttl", "--ttl", "90s");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.outLines().get(1)).isEqualTo("fixed 5 keys");
    for (String n : persisted) {
      assertThat(redis().pttl(n)).as(n).isBetween(80_000L, 90_000L);
    }
    assertThat(r.outLines()).contains("left without a TTL: 2 keys");
    for (String n : NOT_SLUICE) {
      assertThat(redis().pttl(n)).as(n).isEqualTo(-1);
    }
  }

  @Test
  void aDryRunReportsWithoutChangingAnything() {
    Run r = keys("fix-ttl", "--config", config, "--dry-run");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.outLines()).startsWith(deployment().uri() + ", prefix 'sluice:': 22 keys on "
        + (masters() == 1 ? "1 node" : masters() + " nodes") + "; 7 without a TTL",
        "would fix 4 keys (dry run: nothing changed)",
        "  auth.login                     2  TTL 61s",
        "  mail                           1  TTL 32s",
        "  search                         1  TTL 3961s",
        "left without a TTL: 3 keys",
        "  retired.rule                   1  rule not in " + config + "; give --ttl to fix these too",
        "  (not a Sluice key)             2  not named as the store names keys; never changed");
    for (String n : persisted) {
      assertThat(redis().pttl(n)).as(n).isEqualTo(-1);
    }
  }

  @Test
  void anotherPrefixIsMatchedLiterallyEvenWithGlobCharacters() {
    RedisStore store = RedisStore.builder(deployment().uri()).prefix("t*st:").build();
    String mine;
    // Closed before the command runs: a limiter's heartbeat (t*st:{policies}:instances) goes with it.
    try (RateLimiter limiter = Sluice.builder().rules(WRITTEN).store(store).build()) {
      limiter.acquire("search", "k");
      mine = store.keyName("search", "k");
    }
    redis().persist(mine);
    // Would match the pattern t*st:* if the prefix were not escaped.
    redis().set("txst:{search|k}", "x");
    Run r = keys("fix-ttl", "--prefix", "t*st:", "--ttl", "1m", "--json");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(ReplayCommandTest.json(r.out()).get("keys").asLong()).isEqualTo(1);
    assertThat(redis().pttl(mine)).isBetween(50_000L, 60_000L);
    assertThat(redis().pttl("txst:{search|k}")).isEqualTo(-1);
    for (String n : persisted) {
      assertThat(redis().pttl(n)).as("keys under sluice: are not under t*st:").isEqualTo(-1);
    }
  }

  @Test
  void progressGoesToStandardErrorAsAskedFor() {
    Run quiet = keys("stats", "--no-progress");
    assertThat(quiet.err()).isEmpty();
    Run auto = keys("stats");
    assertThat(auto.err()).as("a short run logs no progress unless asked").isEmpty();
    Run asked = keys("stats", "--progress", "--batch", "5");
    assertThat(asked.errLines()).hasSize(1);
    assertThat(asked.err()).matches("scanning: 22 keys, \\d+ SCAN calls, [\\d,]+ keys/s, [\\d,]+ bytes \\[0:\\d\\d]\n");
    assertThat(asked.out()).isEqualTo(quiet.out());

    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Main.commandLine(new ByteArrayInputStream(new byte[0]), new PrintWriter(out), new PrintWriter(err), true)
        .execute("keys", "fix-ttl", "--ttl", "1h", "--dry-run", "--store", deployment().uri());
    assertThat(exit).isZero();
    assertThat(err.toString()).as("on a terminal: one line redrawn in place").startsWith("\r").endsWith("\u001b[K\n")
        .contains("scanning: 22 keys").contains("5 would fix").doesNotContain("\n\r");
  }
}
