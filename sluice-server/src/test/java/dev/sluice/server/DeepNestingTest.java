package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli;
import dev.sluice.server.cli.Cli.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A value nested more than 64 deep is refused at its place — file, line and column of the 65th
 * level — whatever its style and depth, in native and Envoy files, by check-config, at start and
 * on reload. Before, past 1,000 levels the parser's own message came out, without a place:
 * "cannot read: Document nesting depth (1001) exceeds the maximum allowed (1000, from
 * `StreamReadConstraints.getMaxNestingDepth()`)".
 */
class DeepNestingTest {
  static final String NATIVE_HEAD = "limits:\n  - name: a\n    config:\n      - limit: 1\n        period: 1\n";
  static final String MESSAGE = "values are nested more than 64 deep";

  @TempDir
  Path dir;

  /** A file, and the line and column where its 65th level begins. */
  record Case(String name, String text, int line, int column) {}

  /**
   * Under a native rule's key {@code x} (the rule's mapping is level 3, so {@code x}'s value is
   * level 4) and under Envoy's {@code descriptors} (level 2).
   */
  static List<Case> cases(int levels) {
    List<Case> cases = new ArrayList<>();
    // "    x: " puts x's value at column 8; the 65th level is the 62nd bracket from there.
    cases.add(new Case("native-flow-list-" + levels, NATIVE_HEAD + "    x: " + "[".repeat(levels)
        + "]".repeat(levels) + "\n", 6, 8 + 61));
    cases.add(new Case("native-flow-map-" + levels, NATIVE_HEAD + "    x: " + "{a: ".repeat(levels) + "1"
        + "}".repeat(levels) + "\n", 6, 8 + 61 * 4));
    cases.add(new Case("native-block-list-" + levels, NATIVE_HEAD + "    x:\n      " + "- ".repeat(levels)
        + "1\n", 7, 7 + 61 * 2));
    cases.add(new Case("envoy-flow-list-" + levels, "domain: d\ndescriptors: " + "[".repeat(levels)
        + "]".repeat(levels) + "\n", 2, 14 + 63));
    cases.add(new Case("envoy-flow-map-" + levels, "domain: d\ndescriptors: " + "{a: ".repeat(levels) + "1"
        + "}".repeat(levels) + "\n", 2, 14 + 63 * 4));
    cases.add(new Case("envoy-block-list-" + levels, "domain: d\ndescriptors:\n  " + "- ".repeat(levels) + "1\n",
        3, 3 + 63 * 2));
    if (levels <= 1001) {
      // Block mappings need a line each, indented one more: 100,000 levels would take 5 GB.
      StringBuilder b = new StringBuilder(NATIVE_HEAD).append("    x:\n");
      for (int i = 0; i < levels; i++) {
        b.append(" ".repeat(6 + i)).append(i == levels - 1 ? "a: 1\n" : "a:\n");
      }
      // x's value is level 4, on line 7; level 65 is the value of the 61st key, on line 68.
      cases.add(new Case("native-block-map-" + levels, b.toString(), 68, 6 + 61 + 1));
    }
    return cases;
  }

  private String expected(Path file, Case c) {
    return file + ":" + c.line() + ":" + c.column() + ": " + MESSAGE;
  }

  @Test
  void checkConfigPlacesTheProblemAtEveryDepthAndStyle() throws Exception {
    for (int levels : new int[] {65, 1_001, 100_000}) {
      for (Case c : cases(levels)) {
        Path file = Files.writeString(dir.resolve(c.name() + ".yaml"), c.text());
        Run r = Cli.run("check-config", file.toString());
        assertThat(r.exit()).as(c.name()).isEqualTo(2);
        assertThat(r.all()).as(c.name()).contains(expected(file, c)).doesNotContain("Document nesting depth")
            .doesNotContain("StreamReadConstraints");
      }
    }
  }

  @Test
  void serveRefusesItAtStart() throws Exception {
    for (Case c : List.of(cases(100_000).get(0), cases(1_001).get(5))) {
      Path conf = Files.createDirectory(dir.resolve(c.name()));
      Path file = Files.writeString(conf.resolve("limits.yaml"), c.text());
      Run r = Cli.run("serve", "--config", conf.toString(), "--host", "127.0.0.1", "--port", "0");
      assertThat(r.exit()).as(c.name()).isEqualTo(2);
      assertThat(r.all()).as(c.name()).contains(expected(file, c));
    }
  }

  @Test
  void aReloadRefusesItAtItsPlaceAndTheConfigurationInForceStays() throws Exception {
    Path file = Files.writeString(dir.resolve("limits.yaml"), NATIVE_HEAD);
    try (SluiceService s = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withPollInterval(Duration.ofMillis(50)).withDrainTimeout(Duration.ofSeconds(1)),
        dev.sluice.memory.MemoryStore.create())) {
      for (Case c : List.of(cases(1_001).get(1), cases(100_000).get(2))) {
        Files.writeString(file, c.text());
        AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(10),
            () -> expected(file, c).equals(s.reloader().status().lastError()));
        assertThat(s.reloader().status().generation()).isEqualTo(1);
      }
      Files.writeString(dir.resolve("edge.yaml"), cases(100_000).get(4).text());
      Case envoy = cases(100_000).get(4);
      AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(10),
          () -> String.valueOf(s.reloader().status().lastError()).contains(expected(dir.resolve("edge.yaml"), envoy)));
      ServiceClient c = new ServiceClient(s.port());
      assertThat(c.post("/v1/acquire", "{\"rule\":\"a\",\"key\":\"k\"}").statusCode()).isEqualTo(200);
    }
  }
}
