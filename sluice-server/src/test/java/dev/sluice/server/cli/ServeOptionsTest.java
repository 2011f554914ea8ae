package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Options of {@code sluice serve} that are checked before anything starts. */
class ServeOptionsTest {

  @Test
  void aLocalShareOutsideZeroToOneIsAUsageErrorNamingTheOption() {
    Cli.Run r = Cli.run("serve", "--config", Cli.example("limits.yaml"), "--port", "0", "--local-share", "1.5");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--local-share must be auto or in (0, 1], was 1.5");
  }

  @Test
  void aKeyCapBelowOneIsAUsageErrorNamingTheOption() {
    Cli.Run r = Cli.run("serve", "--config", Cli.example("limits.yaml"), "--port", "0", "--max-keys", "0");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--max-keys must be >= 1, was 0");
  }

  @Test
  void aShutdownGraceThatIsNotADurationIsAUsageErrorNamingTheOption() {
    Cli.Run r = Cli.run("serve", "--config", Cli.example("limits.yaml"), "--port", "0", "--shutdown-grace", "-1s");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--shutdown-grace").contains("-1s");
  }

  @Test
  void aShutdownGraceOfZeroMeansNone() {
    assertThat(new ServeCommand.GraceConverter().convert("0")).isZero();
    assertThat(new ServeCommand.GraceConverter().convert("0s")).isZero();
    assertThat(new ServeCommand.GraceConverter().convert("750ms")).hasMillis(750);
  }

  @Test
  void aStoreByteBudgetThatIsNotASizeIsAUsageErrorNamingTheOption() {
    Cli.Run r = Cli.run("serve", "--config", Cli.example("limits.yaml"), "--port", "0", "--max-store-bytes", "lots");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--max-store-bytes").contains("'lots' is not a size");
  }

  @Test
  void boundsOfRequestsAndConnectionsBelowOneAreUsageErrorsNamingTheOption() {
    Cli.Run r = Cli.run("serve", "--config", Cli.example("limits.yaml"), "--port", "0", "--max-in-flight", "0");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--max-in-flight must be >= 1, was 0");
    r = Cli.run("serve", "--config", Cli.example("limits.yaml"), "--port", "0", "--max-connections", "-3");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--max-connections must be >= 1, was -3");
  }
}
