package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Main;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §5: passwords never appear in logs. {@code sluice serve} runs as its users run it, in its
 * own JVM with its logs captured, against a password-protected Redis that goes away and comes
 * back (so the client's reconnection and the store errors are logged too), and at debug level.
 */
class ServeLogsNeverShowPasswordsTest {
  private static final String PASSWORD = "Pw-7f3a91c2e4";

  @TempDir
  Path dir;

  @Test
  void serveOnAPasswordProtectedRedisThatFailsAndComesBackNeverLogsThePassword() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config:
              - limit: 100
                period: 1m
        """);
    Standalone redis = Standalone.start(Flavor.REDIS, "requirepass " + PASSWORD);
    Path log = dir.resolve("serve.log");
    Process p = serve(log, "--store", "redis://:" + PASSWORD + "@127.0.0.1:" + redis.port(),
        "--store-timeout", "200ms");
    try {
      ServiceClient c = new ServiceClient(awaitPort(p, log));
      String body = "{\"rule\":\"api\",\"key\":\"k\"}";
      assertThat(c.post("/v1/acquire", body).statusCode()).isEqualTo(200);

      redis.stop();
      HttpResponse<String> degraded = c.post("/v1/acquire", body);
      assertThat(degraded.body()).contains("\"degraded\":true");
      assertThat(c.get("/readyz").statusCode()).isEqualTo(503);

      redis.restart();
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(30), () -> {
        try {
          return !c.post("/v1/acquire", body).body().contains("degraded");
        } catch (Exception e) {
          return false;
        }
      });

      p.destroy();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      String out = Files.readString(log);
      assertThat(out).contains("store: redis").contains("stopped");
      assertThat(out).as("the logs of serve").doesNotContain(PASSWORD);
    } finally {
      p.destroyForcibly();
      redis.close();
    }
  }

  @Test
  void aWrongPasswordAtStartIsReportedWithoutEitherPassword() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), "limits: []\n");
    Standalone redis = Standalone.start(Flavor.REDIS, "requirepass " + PASSWORD);
    try {
      String wrong = "Wrong-" + PASSWORD;
      Path log = dir.resolve("wrong.log");
      Process p = serve(log, "--store", "redis://:" + wrong + "@127.0.0.1:" + redis.port());
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      String out = Files.readString(log);
      assertThat(p.exitValue()).as(out).isEqualTo(Main.EXIT_UNAVAILABLE);
      assertThat(out).doesNotContain(PASSWORD);
    } finally {
      redis.close();
    }
  }

  /** Starts {@code sluice serve} on a free port at debug level, its output going to {@code log}. */
  private Process serve(Path log, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=debug", "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "serve", "--config", dir.toString(), "--host", "127.0.0.1", "--port", "0"));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private static int awaitPort(Process p, Path log) throws Exception {
    Pattern serving = Pattern.compile("serving on port (\\d+)");
    int[] port = {-1};
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(60), () -> {
      try {
        Matcher m = serving.matcher(Files.readString(log));
        if (m.find()) {
          port[0] = Integer.parseInt(m.group(1));
        }
      } catch (java.io.IOException e) {
        return false;
      }
      return port[0] > 0 || !p.isAlive();
    });
    assertThat(port[0]).as("serve did not start:%n%s", Files.readString(log)).isPositive();
    return port[0];
  }
}
