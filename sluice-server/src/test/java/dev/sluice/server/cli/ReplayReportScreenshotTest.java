package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.example;
import static dev.sluice.server.cli.Cli.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli.Run;
import dev.sluice.server.http.HeadlessChromium;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;

/**
 * The picture of a {@code sluice replay --report} page in docs/cli.md: the README's example trace
 * compared with the same rules, the 3-s limit of {@code auth.createToken} raised to 7, as Chromium
 * draws it.
 */
class ReplayReportScreenshotTest {
  @TempDir
  Path dir;

  @Test
  void theReplayReportScreenshotIsMadeHere() throws Exception {
    // Named in the page as given: a short path reads better in the picture than a temporary one.
    Path other = Path.of("target", "limits-3s-at-7.yaml");
    String limits = Files.readString(Path.of(example("limits.yaml")));
    Files.writeString(other, limits.replace("      - limit: 5\n        period: 3\n", "      - limit: 7\n        period: 3\n"));
    Path page = dir.resolve("report.html");
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--summary-only",
        "--report", page.toString(), "--compare", other.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    try (HeadlessChromium b = new HeadlessChromium(1200, 1600)) {
      b.driver.get(page.toUri().toString());
      assertThat(b.driver.findElements(By.tagName("svg"))).isNotEmpty();
      byte[] png = b.driver.getScreenshotAs(OutputType.BYTES);
      Path images = Path.of("..", "docs", "images");
      Files.createDirectories(images);
      Files.write(images.resolve("replay-report.png"), png);
      assertThat(png.length).isGreaterThan(10_000);
    }
  }
}
