package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli;
import dev.sluice.server.cli.Cli.Run;
import dev.sluice.server.cli.Main;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice serve} as its users run it. */
class ServeCommandTest {
  @TempDir
  Path dir;

  @Test
  void anInvalidConfigurationStopsServeWithItsErrorAndExitCode2() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), "limits:\n  - name: a\n    config:\n      - limit: 0\n        period: 1\n");
    Run r = Cli.run("serve", "--config", dir.toString(), "--host", "127.0.0.1", "--port", "0");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.all()).contains("the configuration is not valid").contains("limits.yaml:4:");
  }

  @Test
  void anUnknownStoreIsAnErrorThatNeverShowsItsPassword() {
    Run r = Cli.run("serve", "--config", dir.toString(), "--store", "mongodb://user:hunter2@db:27017");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.all()).contains("unknown store").doesNotContain("hunter2");
  }

  @Test
  void anUnreachableRedisExits69WithoutItsPassword() {
    Run r = Cli.run("serve", "--config", dir.toString(), "--store", "redis://:s3cret@127.0.0.1:1");
    assertThat(r.exit()).isEqualTo(Main.EXIT_UNAVAILABLE);
    assertThat(r.all()).contains("cannot connect to redis://:***@127.0.0.1:1").doesNotContain("s3cret");
  }

  @Test
  void aBadDurationIsAnErrorNamingIt() {
    Run r = Cli.run("serve", "--config", dir.toString(), "--poll-interval", "soon");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.all()).contains("'soon' is not a duration");
  }

  @Test
  void serveRunsUntilTerminatedAndThenStopsCleanly() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: auth.createToken
            config:
              - limit: 20
                period: 60
              - limit: 5
                period: 3
        """);
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path log = dir.resolve("serve.log");
    Process p = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "serve", "--config", dir.toString(), "--host", "127.0.0.1", "--port", "0",
        "--admin-token", "t0ken").redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      Pattern serving = Pattern.compile("serving on port (\\d+)");
      int[] port = {-1};
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(30), () -> {
        Matcher m = serving.matcher(read(log));
        if (m.find()) {
          port[0] = Integer.parseInt(m.group(1));
        }
        return port[0] > 0 || !p.isAlive();
      });
      assertThat(port[0]).as(read(log)).isPositive();

      ServiceClient c = new ServiceClient(port[0]);
      HttpResponse<String> r = c.post("/v1/acquire", "{\"rule\":\"auth.createToken\",\"key\":\"ip:1\"}");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(c.post("/v1/reset", "{\"rule\":\"auth.createToken\",\"key\":\"ip:1\"}").statusCode()).isEqualTo(401);

      p.destroy();
      assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
      assertThat(read(log)).contains("store: memory").contains("configuration loaded").contains("draining")
          .contains("stopped").doesNotContain("t0ken").doesNotContain("ip:1");
    } finally {
      p.destroyForcibly();
    }
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
