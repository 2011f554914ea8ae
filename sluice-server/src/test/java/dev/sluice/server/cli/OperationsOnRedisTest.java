package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.runWithInput;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli.Run;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operations resolve to ordinary items before the store: a trace by operation decides on Redis
 * exactly as in memory.
 */
class OperationsOnRedisTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).flushBeforeEach();

  @Test
  void aTraceByOperationReplaysOnRedisByteForByteAsInMemory(@TempDir Path dir) throws IOException {
    String config = Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: per_user
            config: [{limit: 3, period: 5s}]
          - name: anonymous
            algorithm: fixed_window
            config: [{limit: 2, period: 4s}]
          - name: per_ip
            algorithm: token_bucket
            config: [{limit: 6, period: 10s}]
          - name: global
            algorithm: sliding_window
            config: [{limit: 20, period: 10s}]
        attributes:
          ip: {type: ip, group: /24, group6: /64}
        operations:
          - name: login
            items:
              - {rule: per_user,  key: "user:{user}", when: user}
              - {rule: anonymous, key: "ip:{ip}",     unless: user}
              - {rule: per_ip,    key: "ip:{ip}", cost: 2}
              - {rule: global,    key: "all"}
        """).toString();
    String[] ips = {"10.0.0.1", "10.0.0.2", "::ffff:10.0.0.3", "10.0.1.1", "2001:db8::1", "2001:db8::2:1"};
    Random random = new Random(7);
    StringBuilder trace = new StringBuilder();
    long t = 1_700_000_000_000L;
    for (int i = 0; i < 400; i++) {
      t += random.nextInt(300);
      String user = random.nextInt(3) == 0 ? null : Integer.toString(random.nextInt(4));
      trace.append("{\"t\":").append(t).append(",\"operation\":\"login\",\"attributes\":{")
          .append(user == null ? "" : "\"user\":\"" + user + "\",")
          .append("\"ip\":\"").append(ips[random.nextInt(ips.length)]).append("\"}}\n");
    }
    Run memory = runWithInput(trace.toString(), "replay", "--config", config, "--store", "memory");
    Run onRedis = runWithInput(trace.toString(), "replay", "--config", config, "--store", redis.get().uri());
    assertThat(memory.exit()).as(memory.err()).isZero();
    assertThat(onRedis.exit()).as(onRedis.err()).isZero();
    assertThat(onRedis.out()).isEqualTo(memory.out());
    assertThat(memory.outLines()).hasSize(401);
    assertThat(memory.out()).contains("\"allowed\":false").contains("\"key\":\"ip:2001:db8::/64\"")
        .contains("\"key\":\"ip:10.0.0.0/24\"");
  }
}
