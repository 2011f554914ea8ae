package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.LoadedConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigFilesTest {

  /** A stand-in second format: one rule named after its 'domain' value. */
  static final ConfigFormat DOMAIN_FORMAT = new ConfigFormat() {
    @Override
    public String topLevelKey() {
      return "domain";
    }

    @Override
    public LoadedConfig parse(String source, String fileName) {
      String domain = source.lines().filter(l -> l.startsWith("domain:")).findFirst().orElseThrow()
          .substring("domain:".length()).strip();
      Rule r = Rule.builder(domain).window(1, Duration.ofSeconds(1)).build();
      return new LoadedConfig(RuleSet.of(r), List.of(), Map.of(domain, new ConfigLocation(fileName, 1, 9)));
    }
  };

  static final List<ConfigFormat> BOTH = List.of(new NativeFormat(), DOMAIN_FORMAT);

  @Test
  void filesAreDispatchedByTheirTopLevelKey(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits:\n  - name: native.rule\n    config: [{limit: 5, period: 1}]\n");
    Files.writeString(dir.resolve("b.yaml"), "domain: edge\ndescriptors: []\n");
    LoadedConfig c = ConfigFiles.load(dir, BOTH);
    assertThat(c.rules().rules()).extracting(Rule::name).containsExactly("native.rule", "edge");
    assertThat(c.origin("edge")).isEqualTo(new ConfigLocation(dir.resolve("b.yaml").toString(), 1, 9));
  }

  @Test
  void ruleNamesMustBeUniqueAcrossFormats(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits:\n  - name: edge\n    config: [{limit: 5, period: 1}]\n");
    Files.writeString(dir.resolve("b.yaml"), "domain: edge\n");
    assertThatThrownBy(() -> ConfigFiles.load(dir, BOTH)).isInstanceOf(ConfigException.class)
        .hasMessage(dir.resolve("b.yaml") + ":1:9: duplicate rule name 'edge' (first defined at "
            + dir.resolve("a.yaml") + ":2:11)");
  }

  @Test
  void aFileOfTwoFormatsIsAnError(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("a.yaml"), "domain: edge\nlimits: []\n");
    assertThatThrownBy(() -> ConfigFiles.load(f, BOTH)).isInstanceOf(ConfigException.class)
        .hasMessage(f + ":1:1: the file has top-level keys of several formats ('limits', 'domain'); put each "
            + "format in its own file");
  }

  @Test
  void withoutASecondFormatEnvoyFilesGetTheNativeReadersExplanation(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("a.yaml"), "domain: edge\n");
    assertThatThrownBy(() -> ConfigFiles.load(f, List.of(new NativeFormat()))).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(f + ":1:1: a top-level 'domain' marks an Envoy rate limit configuration");
  }

  @Test
  void problemsOfAllFilesAreReportedTogether(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits: [\n");
    Files.writeString(dir.resolve("b.yaml"), "limits:\n  - name: x\n    config: [{limit: 0, period: 1}]\n");
    assertThatThrownBy(() -> ConfigFiles.load(dir, BOTH)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).extracting(p -> p.file()).containsExactly(
            dir.resolve("a.yaml").toString(), dir.resolve("b.yaml").toString()));
  }
}
