package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code sluice --version}, in process: the classes are not in a jar here, so the version is the
 * development build's; {@code LauncherIT} reads the shipped jar's.
 */
class VersionCommandTest {
  @Test
  void versionNamesSluiceJavaAndTheSystem() {
    Cli.Run r = Cli.run("--version");
    assertThat(r.exit()).isZero();
    assertThat(r.err()).isEmpty();
    assertThat(r.outLines()).hasSize(3);
    assertThat(r.outLines().get(0)).isEqualTo("sluice (development build)");
    assertThat(r.outLines().get(1)).startsWith("Java " + System.getProperty("java.version") + " (")
        .contains(System.getProperty("java.vm.name"));
    assertThat(r.outLines().get(2)).isEqualTo("OS " + System.getProperty("os.name") + " "
        + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
  }

  @Test
  void theShortFlagPrintsTheSame() {
    assertThat(Cli.run("-V").out()).isEqualTo(Cli.run("--version").out());
  }
}
