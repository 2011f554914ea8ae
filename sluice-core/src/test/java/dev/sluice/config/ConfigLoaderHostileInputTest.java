package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Inputs the configuration fuzzer ({@link ConfigLoaderFuzzProperties}) found to break the loader,
 * each pinned: the loader answers them with a {@link ConfigException} naming the place.
 */
class ConfigLoaderHostileInputTest {

  private static List<String> errors(String yaml) {
    try {
      ConfigLoader.parse(yaml, "t.yaml");
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigProblem::toString).toList();
    }
    throw new AssertionError("expected the configuration to be rejected:\n" + yaml);
  }

  private static void runOnSmallStack(Runnable r) throws InterruptedException {
    Throwable[] thrown = new Throwable[1];
    Thread t = new Thread(null, () -> {
      try {
        r.run();
      } catch (Throwable e) {
        thrown[0] = e;
      }
    }, "small-stack", 512 * 1024);
    t.start();
    t.join();
    if (thrown[0] instanceof Error e) {
      throw e;
    }
    if (thrown[0] instanceof RuntimeException e) {
      throw e;
    }
  }

  @Test
  void deeplyNestedValuesAreAConfigErrorNotAStackOverflow() throws InterruptedException {
    for (String nested : List.of("{a: ".repeat(20_000) + "1" + "}".repeat(20_000),
        "[".repeat(20_000) + "1" + "]".repeat(20_000))) {
      runOnSmallStack(() -> assertThat(errors("limits:\n  - name: a\n    config:\n      - limit: " + nested + "\n"))
          .anySatisfy(e -> assertThat(e).startsWith("t.yaml:4:").contains("nested more than 64 deep")));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"1e999999999", "1e-999999999", "-1e999999999", "1E+999999999"})
  @Timeout(10)
  void aPeriodWithAHugeExponentIsAConfigErrorNotAnOutOfMemoryError(String period) {
    assertThat(errors("limits:\n  - name: a\n    config:\n      - limit: 1\n        period: " + period + "\n"))
        .singleElement().satisfies(e -> assertThat(e).startsWith("t.yaml:5:17: period").contains(period));
  }

  @ParameterizedTest
  @ValueSource(strings = {"1e999999999", "1e-999999999", "1e99999999999"})
  @Timeout(10)
  void aDurationWithAHugeExponentIsAnIllegalArgumentNamingIt(String text) {
    assertThatThrownBy(() -> ConfigLoader.parseDuration(text, "period"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("period " + text);
  }

  @ParameterizedTest
  @ValueSource(strings = {"[a, b]: 1", "? [a]\n: 1", "? {a: 1}\n: 1"})
  void aMappingKeyThatIsNotAPlainValueIsNamedWithoutTheParsersClasses(String key) {
    assertThat(errors("limits:\n  - name: a\n    config:\n      - limit: 1\n        period: 1\n" + key + "\n"))
        .anySatisfy(e -> assertThat(e).contains("not valid YAML"))
        .allSatisfy(e -> assertThat(e).doesNotContain("org.yaml", "snakeyaml", "Event", "com.fasterxml"));
  }

  @Test
  void anErrorAboutAHugeValueQuotesItShortened() {
    String name = "a".repeat(200_000) + "!";
    assertThat(errors("limits:\n  - name: \"" + name + "\"\n    config: [{limit: 1, period: 1}]\n"))
        .singleElement().satisfies(e -> assertThat(e)
            .startsWith("t.yaml:2:11: rule name must be 1-128 characters of letters, digits and _ . : / -, was 'aaa")
            .endsWith("aa!'").contains(" characters ...] ")
            .hasSizeLessThanOrEqualTo("t.yaml:2:11: ".length() + 1_000));
  }
}
