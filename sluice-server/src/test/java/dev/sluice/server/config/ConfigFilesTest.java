package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Rule;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigFilesTest {
  static final String ENVOY = """
      domain: edge
      descriptors:
        - key: k
          rate_limit: {unit: second, requests_per_unit: 1}
      """;

  @TempDir
  Path dir;

  @Test
  void filesAreDispatchedByTheirTopLevelKey() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits:\n  - name: native.rule\n    config: [{limit: 5, period: 1}]\n");
    Files.writeString(dir.resolve("b.yaml"), ENVOY);
    ServiceConfig c = ConfigFiles.load(dir);
    assertThat(c.rules().rules()).extracting(Rule::name).containsExactly("native.rule", "envoy:edge/k");
    assertThat(c.origin("envoy:edge/k")).isEqualTo(new ConfigLocation(dir.resolve("b.yaml").toString(), 3, 5));
    assertThat(c.sources()).extracting(SourceFile::format).containsExactly("native", "envoy");
    assertThat(c.domains()).containsOnlyKeys("edge");
  }

  @Test
  void ruleNamesMustBeUniqueAcrossFormats() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits:\n  - name: envoy:edge/k\n    config: [{limit: 5, period: 1}]\n");
    Files.writeString(dir.resolve("b.yaml"), ENVOY);
    assertThatThrownBy(() -> ConfigFiles.load(dir)).isInstanceOf(ConfigException.class)
        .hasMessage(dir.resolve("b.yaml") + ":3:5: duplicate rule name 'envoy:edge/k' (first defined at "
            + dir.resolve("a.yaml") + ":2:11)");
  }

  @Test
  void aFileOfTwoFormatsIsAnError() throws Exception {
    Path f = Files.writeString(dir.resolve("a.yaml"), "domain: edge\nlimits: []\n");
    assertThatThrownBy(() -> ConfigFiles.load(f)).isInstanceOf(ConfigException.class)
        .hasMessage(f + ":1:1: the file has top-level keys of several formats ('limits', 'domain'); put each "
            + "format in its own file");
  }

  @Test
  void aFileThatIsNeitherNativeNorEnvoyIsAnError() {
    assertThatThrownBy(() -> ConfigFiles.load(Map.of(Path.of("x.yaml"), "rules: []\n")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("x.yaml:1:1: a configuration file needs 'limits:' (native) or 'domain:' (Envoy)");
  }

  @Test
  void twoFilesWithTheSameDomainAreAnErrorNamingBoth() {
    Map<Path, String> files = new LinkedHashMap<>();
    files.put(Path.of("a.yaml"), "domain: d\n");
    files.put(Path.of("b.yaml"), "domain: d\n");
    assertThatThrownBy(() -> ConfigFiles.load(files)).isInstanceOf(ConfigException.class)
        .hasMessage("b.yaml:1:9: duplicate domain 'd' (also in a.yaml); serve and check-config "
            + "--envoy-merge-domains merge such files");
  }

  @Test
  void problemsOfAllFilesAreReportedTogether() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), "limits: [\n");
    Files.writeString(dir.resolve("b.yaml"), "limits:\n  - name: x\n    config: [{limit: 0, period: 1}]\n");
    Files.writeString(dir.resolve("c.yaml"), ENVOY.replace("second", "fortnight"));
    assertThatThrownBy(() -> ConfigFiles.load(dir)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).extracting(ConfigProblem::file).containsExactly(
            dir.resolve("a.yaml").toString(), dir.resolve("b.yaml").toString(), dir.resolve("c.yaml").toString()));
  }

  @Test
  void anEmptyDirectoryIsAnError() {
    assertThatThrownBy(() -> ConfigFiles.load(dir)).isInstanceOf(ConfigException.class)
        .hasMessage(dir + ": the directory holds no *.yaml or *.yml file");
  }
}
