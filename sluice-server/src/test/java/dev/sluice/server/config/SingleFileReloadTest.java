package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.testing.FakeTicker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SPEC §6/§7: the configuration PATH may be one file, native or Envoy, and it is reloaded too. */
class SingleFileReloadTest {
  @TempDir
  Path dir;
  final RateLimiter limiter = Sluice.builder().ticker(new FakeTicker()).build();

  @AfterEach
  void close() {
    limiter.close();
  }

  private ConfigReloader reloader(Path file) throws ConfigException {
    return new ConfigReloader(file, limiter, (ok, config, error) -> {}, Clock.systemUTC());
  }

  private long remaining(String rule, String key) {
    return limiter.acquire(Request.of(rule, key, 0)).items().get(0).windows().get(0).remaining();
  }

  @Test
  void aNativeFileIsReloadedKeepingUnchangedRulesAndRejectingABrokenEdit() throws Exception {
    String text = """
        limits:
          - name: kept
            config: [{limit: 3, period: 60}]
          - name: changed
            config: [{limit: 3, period: 60}]
        """;
    Path file = Files.writeString(dir.resolve("limits.yaml"), text);
    try (ConfigReloader r = reloader(file)) {
      limiter.acquire("kept", "k");
      limiter.acquire("changed", "k");
      Files.writeString(file, text.replace("name: changed\n    config: [{limit: 3", "name: changed\n    config: [{limit: 7"));
      assertThat(r.check()).isTrue();
      assertThat(remaining("kept", "k")).isEqualTo(2);
      assertThat(remaining("changed", "k")).isEqualTo(7);

      Files.writeString(file, "limits:\n  - name: kept\n    config: [{limit: 0, period: 60}]\n");
      assertThat(r.check()).isFalse();
      assertThat(r.status().lastError()).contains("limits.yaml:3:");
      assertThat(limiter.rules().get("changed")).isNotNull();
      assertThat(remaining("kept", "k")).isEqualTo(2);
    }
  }

  @Test
  void anEnvoyFileAloneIsAConfigurationAndIsReloaded() throws Exception {
    Path file = Files.writeString(dir.resolve("edge.yaml"), """
        domain: edge
        descriptors:
          - key: ip
            rate_limit: {unit: minute, requests_per_unit: 5}
        """);
    try (ConfigReloader r = reloader(file)) {
      assertThat(limiter.rules().get("envoy:edge/ip").windows().get(0).limit()).isEqualTo(5);
      Files.writeString(file, Files.readString(file).replace("requests_per_unit: 5", "requests_per_unit: 9"));
      assertThat(r.check()).isTrue();
      assertThat(limiter.rules().get("envoy:edge/ip").windows().get(0).limit()).isEqualTo(9);
      assertThat(r.current().sources()).singleElement().satisfies(s -> assertThat(s.format()).isEqualTo("envoy"));
    }
  }
}
