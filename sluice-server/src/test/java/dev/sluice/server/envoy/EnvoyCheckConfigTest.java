package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice check-config} reads Envoy files beside native ones, with the service's reader. */
class EnvoyCheckConfigTest {
  @TempDir
  Path dir;

  private record Run(int code, String out) {}

  private static Run checkConfig(Path path) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.commandLine(new ByteArrayInputStream(new byte[0]), new PrintWriter(out), new PrintWriter(err))
        .execute("check-config", path.toString());
    return new Run(code, out + err.toString());
  }

  @Test
  void theEnvoyReadmeExamplesPassCheckConfig() {
    // 14 rules: a zero limit and an unlimited descriptor need none.
    Run r = checkConfig(EnvoyHarness.readmeExamples());
    assertThat(r.code).as(r.out).isZero();
    assertThat(r.out).contains("ok: 14 rules in 9 files");
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
    assertThat(r.code).as(r.out).isZero();
    assertThat(r.out).contains("2 rules in 2 files");
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
    assertThat(r.code).isEqualTo(2);
    assertThat(r.out).contains(dir.resolve("b.yaml") + ":4:24: invalid rate limit unit 'fortnight'");
  }
}
