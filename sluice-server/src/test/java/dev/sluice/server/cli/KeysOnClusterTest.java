package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisDeployment;
import dev.sluice.testkit.RedisExtension;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KeysOnClusterTest extends KeysCommandContract {
  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.cluster(Flavor.REDIS).flushBeforeEach();

  static RedisClusterClient client;
  static StatefulRedisClusterConnection<String, String> connection;

  @BeforeAll
  static void connect() {
    client = RedisClusterClient.create(cluster.get().ports().stream()
        .map(p -> RedisURI.create("redis://127.0.0.1:" + p)).toList());
    connection = client.connect();
  }

  @AfterAll
  static void disconnect() {
    connection.close();
    client.shutdown();
  }

  @Override
  RedisDeployment deployment() {
    return cluster.get();
  }

  @Override
  RedisClusterCommands<String, String> redis() {
    return connection.sync();
  }

  @Override
  int masters() {
    return 3;
  }

  @Test
  void theKeysUnderTestLiveOnEveryMaster() {
    // Otherwise the counts above would not show that every master is scanned.
    List<Object> sizes = cluster.get().commandOnAll("DBSIZE");
    assertThat(sizes).hasSize(3).allSatisfy(n -> assertThat((Long) n).isGreaterThan(3));
  }
}
