package dev.sluice.config.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblem;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Envoy-format files the configuration fuzzer ({@code ConfigFilesFuzzProperties}) found to break
 * the reader, each pinned: the reader answers them with a {@link ConfigException} naming the place.
 */
class EnvoyConfigHostileInputTest {

  private static List<String> errors(String yaml) {
    try {
      EnvoyConfigParser.parse("t.yaml", yaml);
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigProblem::toString).toList();
    }
    throw new AssertionError("expected the file to be rejected:\n" + yaml);
  }

  @Test
  void deeplyNestedValuesAreAConfigErrorNotAStackOverflow() throws InterruptedException {
    for (String nested : List.of("{a: ".repeat(20_000) + "1" + "}".repeat(20_000),
        "[".repeat(20_000) + "1" + "]".repeat(20_000))) {
      Throwable[] thrown = new Throwable[1];
      List<List<String>> found = new java.util.ArrayList<>();
      // The stack of the reload poller and of a request thread, or larger.
      Thread t = new Thread(null, () -> {
        try {
          found.add(errors("domain: edge\ndescriptors:\n  - key: ip\n    rate_limit:\n      requests_per_unit: "
              + nested + "\n"));
        } catch (Throwable e) {
          thrown[0] = e;
        }
      }, "small-stack", 512 * 1024);
      t.start();
      t.join();
      assertThat(thrown[0]).isNull();
      assertThat(found.get(0)).singleElement().satisfies(e -> assertThat(e).startsWith("t.yaml:5:")
          .contains("nested more than 64 deep"));
    }
  }

  @Test
  void anAliasIsRefusedNotReadAsTheNameOfItsAnchor() {
    // Read before as the descriptor key "d": a rule envoy:edge/d nobody wrote.
    assertThat(errors("""
        domain: &d edge
        descriptors:
          - key: *d
            rate_limit: {unit: hour, requests_per_unit: 5}
        """)).containsExactly("t.yaml:3:10: YAML aliases (*d) are not supported; write the value out");
  }

  @ParameterizedTest
  @ValueSource(strings = {"[a]: 1", "? [a]\n: 1", "? {a: 1}\n: 1"})
  void aMappingKeyThatIsNotAPlainValueIsNamedWithoutTheParsersClasses(String key) {
    assertThat(errors("domain: edge\n" + key + "\n")).singleElement()
        .satisfies(e -> assertThat(e).contains("not valid YAML")
            .doesNotContain("org.yaml", "snakeyaml", "Event", "com.fasterxml", "\n"));
  }

  @Test
  void aSyntaxErrorIsOneLineAtThePlaceTheParserFoundIt() {
    assertThatThrownBy(() -> EnvoyConfigParser.parse("t.yaml", "domain: edge\ndescriptors:\n  - key: ip\n   x: 1\n"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> assertThat(((ConfigException) e).problems()).singleElement()
            .satisfies(p -> assertThat(p.toString()).startsWith("t.yaml:4:").contains("not valid YAML")
                .doesNotContain("\n", "in 'reader'")));
  }
}
