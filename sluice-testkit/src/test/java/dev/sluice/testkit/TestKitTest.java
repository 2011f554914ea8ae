package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
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

  @Test
  void aClusterWithReplicasPromotesTheReplicaOfAKilledMaster() {
    try (Cluster c = Cluster.withReplicas(Flavor.REDIS)) {
      assertThat(c.ports()).hasSize(3);
      assertThat(c.replicaPorts()).hasSize(3);
      int victim = c.masterPortForSlot(0);
      // The slot of "a" is 15495: another master's.
      int other = c.masterPortForSlot(15495);
      c.commandOn(other, "SET", "{a}k", "v");
      int promoted = c.killMaster(victim);
      assertThat(promoted).isNotEqualTo(victim);
      assertThat(c.masterPortForSlot(0)).isEqualTo(promoted);
      assertThat(c.replicaPorts()).hasSize(2);
      assertThat((String) c.commandOn(promoted, "CLUSTER", "INFO")).contains("cluster_state:ok");
      assertThat(c.commandOn(other, "GET", "{a}k")).isEqualTo("v");
    }
  }

  @Test
  void faultProxyForwardsStallsAndCutsRepliesMidway() throws Exception {
    Standalone s = Standalone.start(Flavor.REDIS);
    try (FaultProxy proxy = FaultProxy.start(s.port())) {
      s.command("SET", "big", "x".repeat(10_000));
      try (Socket c = connect(proxy.port())) {
        assertThat(roundTrip(c, "PING\r\n", 7)).isEqualTo("+PONG\r\n");
        proxy.stall();
        c.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
        c.setSoTimeout(300);
        assertThatThrownBy(() -> c.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
        proxy.heal();
        c.setSoTimeout(2000);
        assertThat(new String(c.getInputStream().readNBytes(7), StandardCharsets.US_ASCII)).isEqualTo("+PONG\r\n");
      }
      proxy.cutReplies();
      try (Socket c = connect(proxy.port())) {
        c.getOutputStream().write("GET big\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream in = c.getInputStream();
        int got = 0;
        try {
          while (in.read() >= 0) {
            got++;
          }
        } catch (IOException reset) {
          // The proxy reset the connection: what matters is how much arrived first.
        }
        assertThat(got).as("bytes of a 10,008-byte reply").isBetween(1, 10_007);
      }
      assertThat(proxy.connectionsCut()).isEqualTo(1);
      proxy.heal();
      try (Socket c = connect(proxy.port())) {
        assertThat(roundTrip(c, "PING\r\n", 7)).isEqualTo("+PONG\r\n");
      }
      assertThat(proxy.connectionsAccepted()).isEqualTo(3);
    } finally {
      s.close();
    }
  }

  private static Socket connect(int port) throws IOException {
    Socket c = new Socket();
    c.connect(new InetSocketAddress("127.0.0.1", port), 1000);
    c.setSoTimeout(2000);
    return c;
  }

  private static String roundTrip(Socket c, String command, int replyBytes) throws IOException {
    c.getOutputStream().write(command.getBytes(StandardCharsets.US_ASCII));
    return new String(c.getInputStream().readNBytes(replyBytes), StandardCharsets.US_ASCII);
  }
}
