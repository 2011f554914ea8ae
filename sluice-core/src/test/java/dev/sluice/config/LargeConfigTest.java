package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A configuration as large as its bounds allow, split over files as a directory of them is read:
 * it loads (merging is linear: names are looked up, not scanned), a duplicate across files is
 * still named with both places, and one past a bound is refused naming the bound.
 */
class LargeConfigTest {

  /**
   * Writes {@code operations} operations (op.0, op.1, ...) over three files, each file with one
   * rule of its own; every operation names the first file's rule.
   */
  static void write(Path dir, int operations) throws IOException {
    int per = (operations + 2) / 3;
    int next = 0;
    for (int f = 0; f < 3; f++) {
      StringBuilder sb = new StringBuilder();
      sb.append("limits:\n  - name: r").append(f).append("\n    config:\n      - limit: 20\n        period: 60\n");
      sb.append("operations:\n");
      for (int i = 0; i < per && next < operations; i++, next++) {
        sb.append("  - name: op.").append(next).append("\n    items:\n      - {rule: r0, key: \"user:{user}\"}\n");
      }
      Files.writeString(dir.resolve("part" + f + ".yaml"), sb.toString());
    }
  }

  @Test
  void aHundredThousandOperationsInThreeFilesLoad(@TempDir Path dir) throws Exception {
    write(dir, RuleSet.MAX_OPERATIONS);

    LoadedConfig c = ConfigLoader.load(dir);

    assertThat(c.operations()).hasSize(RuleSet.MAX_OPERATIONS);
    assertThat(c.rules().operation("op.0")).isNotNull();
    assertThat(c.rules().operation("op." + (RuleSet.MAX_OPERATIONS - 1))).isNotNull();
    assertThat(c.rules().rules()).extracting(Rule::name).containsExactly("r0", "r1", "r2");
  }

  @Test
  void aDuplicateAcrossFilesIsNamedWithBothPlaces(@TempDir Path dir) throws Exception {
    write(dir, 30_000);
    // The last operation of the third file takes the name of the first one of the first file.
    Path third = dir.resolve("part2.yaml");
    Files.writeString(third, Files.readString(third).replace("name: op.29999\n", "name: op.0\n"));

    assertThatThrownBy(() -> ConfigLoader.load(dir))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems())
            .extracting(ConfigProblem::toString)
            .containsExactly(third + ":" + (7 + 3 * 9_999) + ":11: duplicate operation name 'op.0' (first "
                + "defined at " + dir.resolve("part0.yaml") + ":7:11)"));
  }

  @Test
  void oneOperationPastTheBoundIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    write(dir, RuleSet.MAX_OPERATIONS + 1);

    assertThatThrownBy(() -> ConfigLoader.load(dir))
        .isInstanceOfSatisfying(ConfigException.class, e -> {
          assertThat(e.problems()).hasSize(1);
          ConfigProblem p = e.problems().get(0);
          assertThat(p.message()).isEqualTo("the files define 100001 operations; the maximum is 100000");
          // At the first operation beyond the bound: the last one of the third file.
          assertThat(p.file()).isEqualTo(dir.resolve("part2.yaml").toString());
        });
  }

  @Test
  void rulesPastTheBoundAreRefusedNamingIt(@TempDir Path dir) throws Exception {
    // Four files (a file is at most 3 M characters) of 25,000 rules, and one more in the last.
    int next = 0;
    for (int f = 0; f < 4; f++) {
      StringBuilder sb = new StringBuilder("limits:\n");
      for (int i = 0; i < 25_000 + (f == 3 ? 1 : 0); i++, next++) {
        sb.append("  - {name: r").append(next).append(", config: [{limit: 1, period: 1}]}\n");
      }
      Files.writeString(dir.resolve("rules" + f + ".yaml"), sb.toString());
    }

    assertThatThrownBy(() -> ConfigLoader.load(dir))
        .isInstanceOfSatisfying(ConfigException.class, e -> {
          assertThat(e.problems()).hasSize(1);
          ConfigProblem p = e.problems().get(0);
          assertThat(p.message()).isEqualTo("the files define 100001 rules; the maximum is 100000");
          assertThat(p.file()).isEqualTo(dir.resolve("rules3.yaml").toString());
          assertThat(p.line()).isEqualTo(2 + 25_000);
        });
  }

  @Test
  void theLibraryRefusesSetsPastTheBoundsToo() {
    List<Rule> rules = new ArrayList<>();
    for (int i = 0; i <= RuleSet.MAX_RULES; i++) {
      rules.add(Rule.builder("r" + i).window(1, java.time.Duration.ofSeconds(1)).build());
    }
    assertThatThrownBy(() -> RuleSet.of(rules))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("at most 100000 rules, had 100001");
  }
}
