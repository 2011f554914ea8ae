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
import java.nio.file.attribute.FileTime;
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

  /** {@code text} padded with comment lines to {@code bytes}, its modification time 10 s ago. */
  private Path writeOld(String name, String text, long bytes) throws Exception {
    Path p = Files.writeString(dir.resolve(name), dev.sluice.server.ConfigFileSizeTest.padded(text, bytes));
    Files.setLastModifiedTime(p, FileTime.fromMillis(System.currentTimeMillis() - 10_000));
    return p;
  }

  @Test
  void anUnchangedBigFileIsNeitherReadNorParsedByPolling() throws Exception {
    long threeMiB = 3L * 1024 * 1024;
    Path file = writeOld("a.yaml", A, threeMiB);
    try (ConfigReloader r = reloader()) {
      for (int i = 0; i < 20; i++) {
        assertThat(r.check()).isFalse();
      }
      assertThat(r.reads()).as("reads").isZero();
      assertThat(r.parses()).as("parses").isZero();

      // Touched, the same bytes: read once to compare, not parsed.
      Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() - 5_000));
      for (int i = 0; i < 20; i++) {
        assertThat(r.check()).isFalse();
      }
      assertThat(r.reads()).isEqualTo(1);
      assertThat(r.parses()).isZero();

      writeOld("a.yaml", A.replace("limit: 3", "limit: 5"), threeMiB);
      assertThat(r.check()).isTrue();
      assertThat(r.check()).isFalse();
      assertThat(r.reads()).isEqualTo(2);
      assertThat(r.parses()).isEqualTo(1);
      assertThat(remaining("a")).isEqualTo(5);
    }
  }

  @Test
  void aFileJustWrittenIsReadAgainUntilItsStampIsOldEnoughToShowTheNextWrite() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      // A second write of the same size within the file system's clock tick leaves the same stamp.
      Files.writeString(dir.resolve("a.yaml"), A.replace("limit: 3", "limit: 5"));
      Files.setLastModifiedTime(dir.resolve("a.yaml"), FileTime.fromMillis(System.currentTimeMillis()));
      assertThat(r.check()).isTrue();
      assertThat(remaining("a")).isEqualTo(5);
      Files.writeString(dir.resolve("a.yaml"), A.replace("limit: 3", "limit: 7"));
      assertThat(r.check()).isTrue();
      assertThat(remaining("a")).isEqualTo(7);
      assertThat(r.parses()).isEqualTo(2);
    }
  }

  @Test
  void anOversizeFileIsRejectedOnceUnreadAndTheLastGoodRulesStay() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), A);
    try (ConfigReloader r = reloader()) {
      limiter.acquire("a", "k");
      writeOld("a.yaml", A.replace("limit: 3", "limit: 5"), 5L * 1024 * 1024);
      assertThat(r.check()).isFalse();
      assertThat(r.check()).isFalse();
      assertThat(events).containsExactly("failed: " + dir.resolve("a.yaml") + ": the file holds 5 MiB "
          + "(5,242,880 bytes); a configuration file may hold at most 4 MiB (4,194,304 bytes) (not read)");
      assertThat(r.parses()).isZero();
      assertThat(remaining("a")).isEqualTo(2);
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
