package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.example;
import static dev.sluice.server.cli.Cli.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.server.cli.Cli.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Replay decides the same on Redis as in memory: the trace's explicit times make it deterministic. */
class ReplayOnRedisTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).flushBeforeEach();

  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.cluster(Flavor.REDIS).flushBeforeEach();

  private static Run replay(String store, String... more) {
    String[] args = new String[4 + more.length];
    args[0] = "replay";
    args[1] = "--config";
    args[2] = example("limits.yaml");
    args[3] = "--store=" + store;
    System.arraycopy(more, 0, args, 4, more.length);
    Run r = run(args);
    assertThat(r.exit()).as(r.err()).isZero();
    return r;
  }

  @Test
  void theExampleTraceReplaysByteForByteAsInMemory() {
    Run memory = replay("memory", "--trace", example("trace.jsonl"));
    Run onRedis = replay(redis.get().uri(), "--trace", example("trace.jsonl"));
    assertThat(onRedis.out()).isEqualTo(memory.out());
    assertThat(memory.outLines()).hasSize(10);
    assertThat(memory.out()).contains("\"allowed\":false");
  }

  /** Every algorithm, limits tight enough that each rule denies often under the synthetic load below. */
  static final String TIGHT = """
      limits:
        - name: log
          config: [{limit: 3, period: 2s}, {limit: 10, period: 20s}]
        - name: window
          algorithm: sliding_window
          precision: 5
          config: [{limit: 5, period: 10s}]
        - name: fixed
          algorithm: fixed_window
          config: [{limit: 4, period: 7s}, {limit: 9, period: 30s}]
        - name: bucket
          algorithm: token_bucket
          config: [{limit: 3, period: 5s}]
          overrides: [{keys: ["user:1"], config: [{limit: 6, period: 5s}]}]
        - name: shaped
          algorithm: leaky_bucket
          max_wait: 3s
          config: [{limit: 1, period: 2s}]
        - name: tried
          shadow: true
          config: [{limit: 2, period: 5s}]
      """;

  @Test
  void aSyntheticTraceOverEveryAlgorithmReplaysAsInMemory(@TempDir Path dir) throws IOException {
    String config = Files.writeString(dir.resolve("tight.yaml"), TIGHT).toString();
    String[] args = {"replay", "--config", config, "--synthetic", "3000", "--keys", "5", "--rate", "20", "--seed",
        "11", "--store"};
    Run memory = run(concat(args, "memory"));
    Run onRedis = run(concat(args, redis.get().uri()));
    assertThat(memory.exit()).as(memory.err()).isZero();
    assertThat(onRedis.exit()).as(onRedis.err()).isZero();
    assertThat(onRedis.out()).isEqualTo(memory.out());
    // Each rule denies (or, in shadow, would deny) sometimes: the comparison covers denials too.
    JsonNode rules = ReplayCommandTest.json(memory.outLines().get(memory.outLines().size() - 1)).get("summary")
        .get("rules");
    assertThat(rules.size()).isEqualTo(6);
    rules.fields().forEachRemaining(e -> assertThat(e.getValue().get(e.getKey().equals("tried") ? "shadowDenied"
        : "denied").asLong()).as(e.getKey()).isPositive());
    assertThat(memory.out()).contains("\"waitMs\":1");
  }

  private static String[] concat(String[] a, String last) {
    String[] all = java.util.Arrays.copyOf(a, a.length + 1);
    all[a.length] = last;
    return all;
  }

  @Test
  void aClusterReplaysAsInMemory() {
    String[] synthetic = {"--synthetic", "1500", "--keys", "5", "--rate", "40", "--seed", "3"};
    Run memory = replay("memory", synthetic);
    Run onCluster = replay(cluster.get().uri(), synthetic);
    assertThat(onCluster.out()).isEqualTo(memory.out());
  }

  @Test
  void aSecondReplayOnTheSameKeysStartsFromTheStateTheFirstLeft() {
    // Documented: Redis state outlives the command, unlike memory; this is why docs/cli.md says
    // to replay into a scratch database.
    Run first = replay(redis.get().uri(), "--trace", example("trace.jsonl"));
    Run second = replay(redis.get().uri(), "--trace", example("trace.jsonl"));
    assertThat(second.out()).isNotEqualTo(first.out());
  }

  @Test
  void anUnreachableStoreExitsWith69AndNoPassword() {
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--store",
        "redis://:hunter2@127.0.0.1:1");
    assertThat(r.exit()).isEqualTo(Main.EXIT_UNAVAILABLE);
    assertThat(r.err()).startsWith("sluice replay: cannot connect to redis://:***@127.0.0.1:1: ")
        .doesNotContain("hunter2");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aRuleTheRedisStoreCannotDecideStopsTheReplayBeforeItStartsNamingItsPlace(@TempDir Path dir) throws IOException {
    String config = Files.writeString(dir.resolve("big.yaml"), """
        limits:
          - name: big
            config: [{limit: 10000001, period: 1m}]
        """).toString();
    Run r = run("replay", "--config", config, "--synthetic", "10", "--store", redis.get().uri());
    assertThat(r.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(r.err()).startsWith(config + ":2:")
        .contains("rule 'big': window 10000001 per 1m: the Redis store's sliding_log supports limits up to 10000000")
        .doesNotContain("internal error");
    assertThat(r.out()).isEmpty();
  }
}
