package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.server.cli.Cli;
import dev.sluice.server.cli.Cli.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A configuration file is bounded in bytes before it is read: 4 MiB a file, 16 MiB a directory.
 * Before, a 50 MB file of comments ended the service (OutOfMemoryError, exit 3) when it was
 * reloaded at -Xmx192m. Now it is refused naming the file and the bound: at start (exit 2), by
 * check-config (exit 2), and on reload, where the configuration in force stays.
 */
public class ConfigFileSizeTest {
  static final String RULES = """
      limits:
        - name: a
          config:
            - limit: 3
              period: 60
      """;
  static final String OVERSIZE_ERROR = "the file holds 5 MiB (5,242,880 bytes); a configuration file may hold at "
      + "most 4 MiB (4,194,304 bytes) (not read)";

  @TempDir
  Path dir;

  /** {@link #RULES} followed by comment lines, {@code bytes} long in all. */
  static String rulesOf(long bytes) {
    return padded(RULES, bytes);
  }

  /** {@code text} followed by comment lines, {@code bytes} long in all (ASCII). */
  public static String padded(String text, long bytes) {
    StringBuilder b = new StringBuilder(text);
    String line = "# " + "x".repeat(97) + "\n";
    while (b.length() + line.length() <= bytes) {
      b.append(line);
    }
    b.append("#".repeat((int) (bytes - b.length() - 1))).append('\n');
    return b.toString();
  }

  /**
   * Writes the file whole, as editors and config-map swaps do (a new file moved into place): a
   * poll must never see the first megabytes of a large file alone, which would be a good file.
   */
  private Path write(String name, String text) throws IOException {
    Path tmp = Files.createTempFile(dir.getParent(), name, ".tmp");
    Files.writeString(tmp, text);
    return Files.move(tmp, dir.resolve(name), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  @Test
  void checkConfigAndServeRefuseAnOversizeFileNamingItAndTheBound() throws Exception {
    Path big = write("big.yaml", rulesOf(5L * 1024 * 1024));
    Run check = Cli.run("check-config", big.toString());
    assertThat(check.exit()).isEqualTo(2);
    assertThat(check.all()).contains(big + ": " + OVERSIZE_ERROR);
    Run serve = Cli.run("serve", "--config", dir.toString(), "--host", "127.0.0.1", "--port", "0");
    assertThat(serve.exit()).isEqualTo(2);
    assertThat(serve.all()).contains(big + ": " + OVERSIZE_ERROR);
  }

  @Test
  void aDirectoryOverItsBoundIsRefusedNamingItAndEveryFileUnderTheFileBoundIsAccepted() throws Exception {
    for (int i = 0; i < 5; i++) {
      write("part" + i + ".yaml", padded(RULES.replace("name: a", "name: a" + i), 4L * 1024 * 1024));
    }
    Run check = Cli.run("check-config", dir.toString());
    assertThat(check.exit()).isEqualTo(2);
    assertThat(check.all()).contains(dir + ": the directory's 5 configuration files hold 20 MiB (20,971,520 bytes) "
        + "together; they may hold at most 16 MiB (16,777,216 bytes) (none read)");
    Files.delete(dir.resolve("part4.yaml"));
    assertThat(Cli.run("check-config", dir.toString()).exit()).isZero();
  }

  @Test
  void anOversizeFileOnReloadIsRejectedAndTheConfigurationInForceStays() throws Exception {
    write("limits.yaml", RULES);
    try (SluiceService s = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withPollInterval(Duration.ofMillis(50)).withDrainTimeout(Duration.ofSeconds(1)),
        dev.sluice.memory.MemoryStore.create())) {
      ServiceClient c = new ServiceClient(s.port());
      assertThat(c.post("/v1/acquire", "{\"rule\":\"a\",\"key\":\"k\"}").statusCode()).isEqualTo(200);
      Path file = write("limits.yaml", rulesOf(5L * 1024 * 1024).replace("limit: 3", "limit: 7"));
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(10),
          () -> s.reloader().status().lastError() != null);
      JsonNode rules = ServiceClient.json(c.get("/v1/rules"));
      assertThat(rules.get("lastReload").get("ok").asBoolean()).isFalse();
      assertThat(rules.get("lastReload").get("error").asText()).isEqualTo(file + ": " + OVERSIZE_ERROR);
      assertThat(rules.get("generation").asLong()).isEqualTo(1);
      assertThat(rules.get("rules").get(0).get("windows").get(0).get("limit").asLong()).isEqualTo(3);
      String metrics = c.get("/metrics").body();
      assertThat(metrics).contains("sluice_config_reloads_total{result=\"failed\"} 1.0")
          .contains("sluice_config_last_reload_ok 0.0");
      JsonNode d = ServiceClient.json(c.post("/v1/acquire", "{\"rule\":\"a\",\"key\":\"k\"}"));
      assertThat(d.get("items").get(0).get("windows").get(0).get("remaining").asLong())
          .as("the rule in force kept its state").isEqualTo(1);
      assertThat(c.get("/healthz").statusCode()).isEqualTo(200);
    }
  }
}
