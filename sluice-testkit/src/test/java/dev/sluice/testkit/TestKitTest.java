package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class TestKitTest {

  @Test
  void missingBinaryFailsWithTheInstallCommand() {
    assertThatThrownBy(() -> Flavor.VALKEY.binaryOn("/nonexistent"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("valkey-server is not installed")
        .hasMessageContaining("apt-get install -y -t bookworm-backports valkey-server");
    assertThatThrownBy(() -> Flavor.REDIS.binaryOn("/nonexistent"))
        .hasMessageContaining("apt-get install -y redis-server redis-sentinel");
  }

  @Test
  void standaloneServersAnswerOnLoopbackAndStopByPid() {
    for (Flavor f : Flavor.values()) {
      Standalone s = Standalone.start(f);
      long pid = s.pid();
      try {
        assertThat(s.command("PING")).isEqualTo("PONG");
        assertThat(s.command("CONFIG", "GET", "bind")).isEqualTo(List.of("bind", "127.0.0.1"));
        assertThat(ProcessHandle.of(pid)).isPresent();
      } finally {
        s.close();
      }
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    }
  }

  @Test
  void clusterCoversEverySlotWithThreeMasters() {
    try (Cluster c = Cluster.start(Flavor.REDIS)) {
      for (Object info : c.commandOnAll("CLUSTER", "INFO")) {
        assertThat((String) info).contains("cluster_state:ok", "cluster_size:3", "cluster_slots_ok:16384");
      }
      assertThat(c.uri()).startsWith("redis-cluster://127.0.0.1:");
    }
  }

  @Test
  void sentinelsPromoteTheReplicaOnAPlannedFailoverAndOnACrash() {
    try (SentinelGroup g = SentinelGroup.start(Flavor.REDIS)) {
      assertThat(g.uri()).startsWith("redis-sentinel://127.0.0.1:").endsWith("#mymaster");
      int first = g.masterPort();
      g.command("SET", "k", "v");
      g.command("WAIT", "1", "5000");
      int second = g.failover();
      assertThat(second).isNotEqualTo(first);
      assertThat(g.masterPort()).isEqualTo(second);
      assertThat(g.command("GET", "k")).isEqualTo("v");
    }
    try (SentinelGroup g = SentinelGroup.start(Flavor.REDIS)) {
      int first = g.masterPort();
      g.command("SET", "k", "v");
      g.command("WAIT", "1", "5000");
      int second = g.killMaster();
      assertThat(second).isNotEqualTo(first);
      assertThat(g.command("GET", "k")).isEqualTo("v");
    }
  }
}
