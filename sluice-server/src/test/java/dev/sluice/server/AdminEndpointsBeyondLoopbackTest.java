package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §12: {@code serve} binds loopback unless told otherwise; bound to any other address without
 * an admin token, admin endpoints are refused. Addresses beyond loopback are made in a network
 * namespace of the test's own ({@code unshare -n}, as root), where nothing outside can reach them.
 */
class AdminEndpointsBeyondLoopbackTest {
  private static final String TOKEN = "Adm1n-9c41e7";

  @TempDir
  Path dir;

  @BeforeEach
  void config() throws IOException {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config:
              - limit: 100
                period: 1m
        """);
  }

  @Test
  void boundBeyondLoopbackWithoutATokenResetIsRefusedWith403SayingHowToEnableItAndAWarningIsLogged() throws Exception {
    Probe p = probe("10.9.9.9", "10.9.9.9", null);
    assertThat(p.out()).as(p.all()).contains("ACQUIRE 200");
    assertThat(p.line("RESET")).as(p.all()).startsWith("RESET 403").contains("\"code\":\"admin_disabled\"")
        .contains("--admin-token").contains("SLUICE_ADMIN_TOKEN");
    assertThat(p.err()).contains("WARN").contains("listening on 10.9.9.9, beyond loopback, without an admin token");
  }

  @Test
  void boundToEveryAddressWithoutATokenResetIsRefusedEvenToALoopbackClient() throws Exception {
    Probe p = probe("0.0.0.0", "127.0.0.1", null);
    assertThat(p.line("RESET")).as(p.all()).startsWith("RESET 403");
    assertThat(p.err()).contains("beyond loopback, without an admin token");
  }

  @Test
  void boundBeyondLoopbackWithATokenResetNeedsItAndTheTokenIsNeverLogged() throws Exception {
    Probe p = probe("10.9.9.9", "10.9.9.9", TOKEN);
    assertThat(p.line("RESET ")).as(p.all()).startsWith("RESET 401");
    assertThat(p.line("RESET_WITH_TOKEN")).as(p.all()).startsWith("RESET_WITH_TOKEN 200");
    assertThat(p.err()).doesNotContain("without an admin token").doesNotContain(TOKEN);
  }

  @Test
  void serveWithoutHostListensOnLoopbackOnly() throws Exception {
    List<String> args = List.of("serve", "--config", dir.toString(), "--port", "0");
    try (ServeProcess p = ServeProcess.start(dir.resolve("serve.log"), List.of(),
        dev.sluice.server.cli.Main.class.getName(), args)) {
      p.awaitPort();
      assertThat(p.log()).contains("listening on 127.0.0.1:" + p.port()).doesNotContain("beyond loopback");
    }
  }

  private record Probe(String out, String err) {
    String all() {
      return out + "\n--- log ---\n" + err;
    }

    String line(String prefix) {
      return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("(no line " + prefix + ")");
    }
  }

  /** Runs {@link NamespaceProbe} in a new network namespace where 10.9.9.9 is an address of lo. */
  private Probe probe(String bind, String connect, String token) throws Exception {
    requireNetworkNamespaces();
    List<String> java = new ArrayList<>(ServeProcess.prefix());
    java.addAll(List.of("-cp", System.getProperty("java.class.path"), NamespaceProbe.class.getName(),
        dir.toString(), bind, connect, "18080"));
    if (token != null) {
      java.add(token);
    }
    StringBuilder script = new StringBuilder("ip link set lo up && ip addr add 10.9.9.9/32 dev lo && exec");
    for (String a : java) {
      script.append(" '").append(a.replace("'", "'\\''")).append('\'');
    }
    Path out = dir.resolve("probe.out");
    Path err = dir.resolve("probe.err");
    Process p = new ProcessBuilder("unshare", "-n", "sh", "-c", script.toString())
        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    try {
      assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("the probe finished").isTrue();
    } finally {
      p.destroyForcibly();
    }
    return new Probe(Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
  }

  private static void requireNetworkNamespaces() throws Exception {
    Process p;
    try {
      p = new ProcessBuilder("unshare", "-n", "sh", "-c", "ip link set lo up && ip addr add 10.9.9.9/32 dev lo")
          .redirectErrorStream(true).start();
    } catch (IOException e) {
      fail("this test needs 'unshare' (util-linux) and 'ip' (iproute2) to bind an address beyond loopback in a "
          + "network namespace of its own: " + e.getMessage());
      return;
    }
    boolean done = p.waitFor(Duration.ofSeconds(20).toMillis(), TimeUnit.MILLISECONDS);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!done || p.exitValue() != 0) {
      p.destroyForcibly();
      fail("this test needs to run as root with 'unshare -n' and 'ip' working, to bind an address beyond loopback "
          + "in a network namespace of its own; 'unshare -n sh -c \"ip link set lo up && ip addr add 10.9.9.9/32 "
          + "dev lo\"' failed: " + out);
    }
  }
}
