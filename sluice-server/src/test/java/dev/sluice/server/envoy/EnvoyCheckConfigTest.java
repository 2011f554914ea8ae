package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli;
import dev.sluice.server.cli.Cli.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice check-config} reads Envoy files beside native ones, with the service's reader. */
class EnvoyCheckConfigTest {
  @TempDir
  Path dir;

  private static Run checkConfig(Path path) {
    return Cli.run("check-config", path.toString());
  }

  @Test
  void theEnvoyReadmeExamplesPassCheckConfigWithAWarningForDetailedMetric() {
    // 14 rules: a zero limit and an unlimited descriptor need none. detailed_metric only names
    // Envoy's statsd metrics: it is read, and said to change nothing, never passed over as "ok".
    Run r = checkConfig(EnvoyHarness.readmeExamples());
    assertThat(r.exit()).as(r.all()).isEqualTo(1);
    assertThat(r.all()).contains("example8-example8.yaml:4:5: warning: detailed_metric only names "
        + "envoyproxy/ratelimit's own statsd metrics").contains("1 warning: 14 rules in 9 files");
  }

  @Test
  void nativeAndEnvoyFilesAreCheckedTogether() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), """
        limits:
          - name: auth.createToken
            config:
              - limit: 20
                period: 60
        """);
    Files.writeString(dir.resolve("b.yaml"), """
        domain: edge
        descriptors:
          - key: remote_address
            rate_limit: {unit: second, requests_per_unit: 10}
        """);
    Run r = checkConfig(dir);
    assertThat(r.exit()).as(r.all()).isZero();
    assertThat(r.all()).contains("2 rules in 2 files");
  }

  @Test
  void anEnvoyErrorIsPrintedWithItsLineAndColumnAndExits2() throws Exception {
    Files.writeString(dir.resolve("b.yaml"), """
        domain: edge
        descriptors:
          - key: remote_address
            rate_limit: {unit: fortnight, requests_per_unit: 10}
        """);
    Run r = checkConfig(dir);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.all()).contains(dir.resolve("b.yaml") + ":4:24: invalid rate limit unit 'fortnight'");
  }
}
