package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Sluice;
import dev.sluice.config.ConfigException;
import dev.sluice.testing.FakeTicker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reloads driven by hand ({@link ConfigReloader#check()}), on the memory store and a fake clock. */
class ConfigReloaderTest {
  static final String A = """
      limits:
        - name: a
          config:
            - limit: 3
              period: 60
      """;
  static final String B = """
      limits:
        - name: b
          config:
            - limit: 3
              period: 60
      """;

  @TempDir
  Path dir;
  final FakeTicker ticker = new FakeTicker();
  RateLimiter limiter;
  final List<String> events = new ArrayList<>();

  @BeforeEach
  void limiter() {
    limiter = Sluice.builder().ticker(ticker).build();
  }

  @AfterEach
  void close() {
    limiter.close();
  }

  private ConfigReloader reloader() throws ConfigException {
    return new ConfigReloader(dir, limiter,
        (ok, config, error) -> events.add(ok ? "ok" : "failed: " + error), Clock.systemUTC());
  }

  private long remaining(String rule) {
    return limiter.acquire(Request.of(rule, "k", 0)).items().get(0).windows().get(0).remaining();
  }

  @Test
  void nothingChangedMeansNoReload() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      assertThat(r.check()).isFalse();
      Files.writeString(dir.resolve("a.yaml"), A);
      assertThat(r.check()).isFalse();
      assertThat(events).isEmpty();
      assertThat(r.status().generation()).isEqualTo(1);
    }
  }

  @Test
  void aFileAddedOrRemovedChangesTheRulesAndTheOthersKeepTheirState() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      limiter.acquire("a", "k");
      Files.writeString(dir.resolve("b.yaml"), B);
      assertThat(r.check()).isTrue();
      assertThat(limiter.rules().get("b")).isNotNull();
      assertThat(remaining("a")).isEqualTo(2);
      assertThat(r.current().sourceOf("b").file()).endsWith("b.yaml");

      Files.delete(dir.resolve("b.yaml"));
      assertThat(r.check()).isTrue();
      assertThat(limiter.rules().get("b")).isNull();
      assertThat(remaining("a")).isEqualTo(2);
      assertThat(r.status().generation()).isEqualTo(3);
      assertThat(events).containsExactly("ok", "ok");
    }
  }

  @Test
  void aChangedRuleStartsAfreshWhileTheVersionOfItsFileChanges() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      String before = r.current().sources().get(0).version();
      limiter.acquire("a", "k");
      Files.writeString(dir.resolve("a.yaml"), A.replace("limit: 3", "limit: 5"));
      assertThat(r.check()).isTrue();
      assertThat(remaining("a")).isEqualTo(5);
      assertThat(r.current().sources().get(0).version()).isNotEqualTo(before).matches("[0-9a-f]{12}");
    }
  }

  @Test
  void aBrokenFileIsReportedOnceAndTheLastGoodRulesStay() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      limiter.acquire("a", "k");
      Files.writeString(dir.resolve("a.yaml"), A.replace("limit: 3", "limit: -3"));
      assertThat(r.check()).isFalse();
      assertThat(r.check()).isFalse();
      assertThat(events).hasSize(1);
      assertThat(events.get(0)).startsWith("failed: ").contains("a.yaml:4:");
      assertThat(r.status().lastError()).contains("a.yaml:4:");
      assertThat(r.status().lastErrorAt()).isNotNull();
      assertThat(remaining("a")).isEqualTo(2);

      Files.writeString(dir.resolve("a.yaml"), A);
      assertThat(r.check()).isTrue();
      assertThat(r.status().lastError()).isNull();
      // The same definition as before the broken edit: its state was kept all along.
      assertThat(remaining("a")).isEqualTo(2);
    }
  }

  @Test
  void aDirectoryThatDisappearsIsAnErrorAndItsReturnReloads() throws Exception {
    Path sub = Files.createDirectory(dir.resolve("conf"));
    Files.writeString(sub.resolve("a.yaml"), A);
    try (ConfigReloader r = new ConfigReloader(sub, limiter,
        (ok, config, error) -> events.add(ok ? "ok" : "failed: " + error), Clock.systemUTC())) {
      Files.delete(sub.resolve("a.yaml"));
      Files.delete(sub);
      assertThat(r.check()).isFalse();
      assertThat(r.status().lastError()).contains("no such file or directory");
      assertThat(limiter.rules().get("a")).isNotNull();
      Files.createDirectory(sub);
      Files.writeString(sub.resolve("a.yaml"), A);
      assertThat(r.check()).isTrue();
    }
  }

  @Test
  void aDirectoryEmptiedOfItsFilesIsRejectedAndTheLastGoodRulesStay() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      Files.delete(dir.resolve("a.yaml"));
      assertThat(r.check()).isFalse();
      assertThat(r.status().lastError()).contains("the directory holds no *.yaml or *.yml file");
      assertThat(limiter.rules().get("a")).isNotNull();
    }
  }

  @Test
  void aBadConfigurationAtStartIsAnError() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits: [{name: a}]\n");
    assertThatThrownBy(this::reloader).isInstanceOf(ConfigException.class).hasMessageContaining("a.yaml:1:");
  }
}
