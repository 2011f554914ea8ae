package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.server.cli.Cli.Run;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisDeployment;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KeysOnStandaloneTest extends KeysCommandContract {
  @RegisterExtension
  static final RedisExtension<Standalone> server = RedisExtension.standalone(Flavor.REDIS).flushBeforeEach();

  static RedisClient client;
  static StatefulRedisConnection<String, String> connection;

  @BeforeAll
  static void connect() {
    client = RedisClient.create(server.get().uri());
    connection = client.connect();
  }

  @AfterAll
  static void disconnect() {
    connection.close();
    client.shutdown();
  }

  @Override
  RedisDeployment deployment() {
    return server.get();
  }

  @Override
  RedisClusterCommands<String, String> redis() {
    return connection.sync();
  }

  @Override
  int masters() {
    return 1;
  }

  @Test
  void theTtlGivenToARuleKeyIsNeverShorterThanOneTheStoreSetsOnAWrite() {
    RuleSet rules = RuleSet.of(
        Rule.builder("log").window(3, Duration.ofSeconds(2)).window(10, Duration.ofSeconds(20)).build(),
        Rule.builder("fixed").algorithm(Algorithm.FIXED_WINDOW).window(4, Duration.ofSeconds(7)).build(),
        Rule.builder("sliding").algorithm(Algorithm.SLIDING_WINDOW).precision(4).window(8, Duration.ofSeconds(60))
            .build(),
        Rule.builder("bucket").algorithm(Algorithm.TOKEN_BUCKET).window(3, Duration.ofSeconds(10)).build(),
        Rule.builder("shaped").algorithm(Algorithm.LEAKY_BUCKET).maxWait(Duration.ofSeconds(40))
            .window(2, Duration.ofSeconds(10)).build());
    RedisStore store = RedisStore.connect(server.get().uri());
    try (RateLimiter limiter = Sluice.builder().rules(rules).store(store).build()) {
      for (Rule rule : rules.rules()) {
        long bound = KeysFixTtlCommand.ruleTtlMillis(rule);
        long longest = 0;
        // Requests at one instant fill every window, queue and bucket as far as the rule admits. The
        // instant is a multiple of 7 s and of 60 s, where a fixed window or a bucket has just begun.
        // Each takes the largest cost the rule admits, which holds a bucket longest.
        long cost = rule.windows().stream().mapToLong(w -> w.limit()).min().orElseThrow();
        for (int i = 0; i < 12; i++) {
          limiter.acquire(Request.of(rule.name(), "k", cost).atMillis(999_999_840_000L));
          longest = Math.max(longest, connection.sync().pttl(store.keyName(rule.name(), "k")));
        }
        assertThat(longest).as(rule.name()).isPositive().isLessThanOrEqualTo(bound);
        // And not much longer: the bound is the store's own, not a guess padded for safety.
        assertThat(bound - longest).as(rule.name()).isLessThan(1_000);
      }
    }
  }

  @Test
  void missingOrWrongOptionsAreErrorsThatSayWhatToGive() {
    Run neither = keys("fix-ttl");
    assertThat(neither.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(neither.err()).isEqualTo("sluice keys fix-ttl: give --config (each rule's longest window), "
        + "--ttl DURATION, or both\n");
    Run memory = Cli.run("keys", "stats", "--store", "memory");
    assertThat(memory.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(memory.err()).startsWith("sluice keys stats: --store: the memory store lives inside a process");
    Run batch = keys("stats", "--batch", "0");
    assertThat(batch.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(batch.err()).startsWith("sluice keys stats: --batch must be between 1 and 1000000, was 0");
    Run ttl = keys("fix-ttl", "--ttl", "soon");
    assertThat(ttl.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(ttl.err()).contains("'soon' is not a duration");
    Run prefix = keys("stats", "--prefix", "a{b}:");
    assertThat(prefix.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(prefix.err()).startsWith("sluice keys stats: --prefix must not contain '{' or '}'");
    Run none = Cli.run("keys");
    assertThat(none.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(none.err()).startsWith("missing command: stats or fix-ttl");
    Run bad = Cli.run("keys", "stats", "--store", "postgres://u:s3cret@db");
    assertThat(bad.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(bad.err()).contains("'postgres://u:***@db' is not a Redis URI").doesNotContain("s3cret");
  }

  @Test
  void anAclUserWithTheRightsTheDocListsCanRunBothAndOneWithoutIsToldWhichIsMissing() {
    server.get().command("ACL", "SETUSER", "keys-tool", "on", ">tool-pw", "~sluice:*", "+scan", "+pttl",
        "+memory|usage", "+eval", "+pexpire");
    server.get().command("ACL", "SETUSER", "scan-only", "on", ">scan-pw", "~sluice:*", "+scan", "+pttl");
    try {
      String uri = "redis://keys-tool:tool-pw@127.0.0.1:" + server.get().port();
      Run stats = Cli.run("keys", "stats", "--store", uri, "--json");
      assertThat(stats.exit()).as(stats.err()).isZero();
      assertThat(ReplayCommandTest.json(stats.out()).get("keys").asLong()).isEqualTo(22);
      Run fix = Cli.run("keys", "fix-ttl", "--store", uri, "--ttl", "1h", "--json");
      assertThat(fix.exit()).as(fix.err()).isZero();
      assertThat(ReplayCommandTest.json(fix.out()).get("fixed").asLong()).isEqualTo(5);

      Run refused = Cli.run("keys", "stats", "--store", "redis://scan-only:scan-pw@127.0.0.1:" + server.get().port());
      assertThat(refused.exit()).isEqualTo(Main.EXIT_ERRORS);
      assertThat(refused.err()).startsWith("sluice keys stats: the server refused a command: NOPERM")
          .contains("memory|usage").doesNotContain("scan-pw");
    } finally {
      server.get().command("ACL", "DELUSER", "keys-tool", "scan-only");
    }
  }

  @Test
  void anUnreachableServerExitsWith69WithoutThePassword() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Run r = Cli.run("keys", "stats", "--store", "redis://ops:hunter2@127.0.0.1:" + port);
    assertThat(r.exit()).isEqualTo(Main.EXIT_UNAVAILABLE);
    assertThat(r.err()).startsWith("sluice keys stats: cannot connect to redis://ops:***@127.0.0.1:" + port + ": ")
        .doesNotContain("hunter2");
  }

  @Test
  void aPasswordProtectedServerIsScannedAndThePasswordNeverPrinted() {
    try (Standalone guarded = Standalone.start(Flavor.REDIS, "requirepass pa55-word")) {
      String uri = "redis://:pa55-word@127.0.0.1:" + guarded.port();
      RedisClient owner = RedisClient.create(uri);
      try (StatefulRedisConnection<String, String> c = owner.connect()) {
        c.sync().set("sluice:{a.rule|k}", "x");
      } finally {
        owner.shutdown();
      }
      Run r = Cli.run("keys", "stats", "--store", uri, "--progress");
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.out()).startsWith("redis://:***@127.0.0.1:" + guarded.port() + ", prefix 'sluice:': 1 keys");
      assertThat(r.out() + r.err()).doesNotContain("pa55-word");
      Run wrong = Cli.run("keys", "stats", "--store", "redis://:guess@127.0.0.1:" + guarded.port());
      assertThat(wrong.exit()).isEqualTo(Main.EXIT_UNAVAILABLE);
      assertThat(wrong.err()).doesNotContain("guess").doesNotContain("pa55-word");
    }
  }
}
