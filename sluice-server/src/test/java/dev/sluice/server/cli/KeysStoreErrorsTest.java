package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code sluice keys} opens {@code --store} as serve and replay do: the same exits, no password shown. */
class KeysStoreErrorsTest {
  @Test
  void aUriThatIsNotRedisIsTheUsersMistake() {
    Cli.Run r = Cli.run("keys", "stats", "--store", "memcached://user:hunter2@127.0.0.1:11211");
    assertThat(r.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(r.err()).contains("sluice keys stats: --store: ").contains("is not a Redis URI")
        .doesNotContain("hunter2");
  }

  @Test
  void aStoreThatCannotBeReachedIsUnavailable() {
    Cli.Run r = Cli.run("keys", "fix-ttl", "--ttl", "1h", "--store", "redis://user:hunter2@127.0.0.1:1");
    assertThat(r.exit()).isEqualTo(Main.EXIT_UNAVAILABLE);
    assertThat(r.err()).startsWith("sluice keys fix-ttl: ").doesNotContain("hunter2");
  }

  @Test
  void aTtlIsReadAsConfigurationFilesWriteDurations() {
    Cli.Run r = Cli.run("keys", "fix-ttl", "--ttl", "1w", "--store", "redis://127.0.0.1:1");
    assertThat(r.exit()).isEqualTo(Main.EXIT_ERRORS);
    assertThat(r.err()).contains("--ttl").contains("'1w' is not a duration; expected a number of seconds");
  }
}
