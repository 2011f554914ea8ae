package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.runWithInput;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.server.cli.Cli.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SPEC §7 (replay) and §2 (keys): the trace's clock is the Unix epoch, and keys are never cut. */
class ReplayClockAndKeyPromisesTest {
  @TempDir
  Path dir;

  private String config() throws IOException {
    return Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: fw
            algorithm: fixed_window
            config:
              - limit: 2
                period: 10s
          - name: daily
            algorithm: fixed_window
            config:
              - limit: 1
                period: 1d
        """).toString();
  }

  private static JsonNode window(String line) {
    return ReplayCommandTest.json(line).get("items").get(0).get("windows").get(0);
  }

  @Test
  void fixedWindowsAlignAtMultiplesOfThePeriodFromTZero() throws IOException {
    // A window aligned to the first request (t = 9998) would still hold both units at t = 10000.
    String trace = """
        {"t":9998,"rule":"fw","key":"a"}
        {"t":9999,"rule":"fw","key":"a"}
        {"t":9999,"rule":"fw","key":"a"}
        {"t":10000,"rule":"fw","key":"a"}
        {"t":86399999,"rule":"daily","key":"a"}
        {"t":86400000,"rule":"daily","key":"a"}
        """;
    Run r = runWithInput(trace, "replay", "--config", config(), "--trace", "-");
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> out = r.outLines();
    assertThat(out).extracting(l -> ReplayCommandTest.json(l).path("allowed").asText())
        .containsExactly("true", "true", "false", "true", "true", "true", "");
    assertThat(window(out.get(0)).get("resetAfterMs").asLong()).isEqualTo(2);
    assertThat(window(out.get(2)).get("retryAfterMs").asLong()).isEqualTo(1);
    assertThat(window(out.get(3)).get("remaining").asLong()).isEqualTo(1);
    assertThat(window(out.get(3)).get("resetAfterMs").asLong()).isEqualTo(10_000);
    // t is milliseconds since the Unix epoch: day windows end at midnight UTC.
    assertThat(window(out.get(4)).get("resetAfterMs").asLong()).isEqualTo(1);
    assertThat(window(out.get(5)).get("resetAfterMs").asLong()).isEqualTo(86_400_000);
  }

  @Test
  void aKeyOfMoreThan512BytesStopsTheReplayNamingItsLineAndOneOf512IsKeptWhole() throws IOException {
    String longest = "é".repeat(256);
    Run ok = runWithInput("{\"t\":0,\"rule\":\"fw\",\"key\":\"" + longest + "\"}\n", "replay", "--config", config());
    assertThat(ok.exit()).as(ok.err()).isZero();
    assertThat(ReplayCommandTest.json(ok.outLines().get(0)).get("items").get(0).get("key").asText()).isEqualTo(longest);

    String trace = "{\"t\":0,\"rule\":\"fw\",\"key\":\"a\"}\n{\"t\":1,\"rule\":\"fw\",\"key\":\"" + longest + "k\"}\n";
    Run r = runWithInput(trace, "replay", "--config", config(), "--summary-only");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err().strip()).isEqualTo("<stdin>:2: key is 513 bytes of UTF-8; the maximum is 512 (rule 'fw')");
  }
}
