package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Window;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DurationsTest {

  /** The period of a one-window rule whose period is written as {@code yaml}. */
  static long periodMicros(String yaml) throws ConfigException {
    Window w = ConfigLoader.parse("limits:\n  - name: a\n    config:\n      - limit: 1\n        period: " + yaml + "\n", "t")
        .rules().get("a").windows().get(0);
    return w.periodMicros();
  }

  @ParameterizedTest(name = "period: {0} is {1} µs")
  @CsvSource(delimiter = '|', value = {
      "60                | 60000000",
      "3                 | 3000000",
      "0.5               | 500000",
      "0.1               | 100000",
      ".25               | 250000",
      "1e-3              | 1000",
      "0.000001          | 1",
      "500ms             | 500000",
      "3s                | 3000000",
      "1.5s              | 1500000",
      "1m                | 60000000",
      "1h                | 3600000000",
      "1d                | 86400000000",
      "250us             | 250",
      "250µs             | 250",
      "1m30s             | 90000000",
      "1h0m0.5s          | 3600500000",
      "'\"3s\"'          | 3000000",
      "PT1M              | 60000000",
      "PT0.25S           | 250000",
      "P1D               | 86400000000",
      "PT1H30M           | 5400000000",
      "3650d             | 315360000000000",
  })
  void everyDurationSyntaxReadsExactly(String yaml, long micros) throws ConfigException {
    assertThat(periodMicros(yaml.strip())).isEqualTo(micros);
  }

  @ParameterizedTest(name = "period: {0} is rejected: {1}")
  @CsvSource(delimiter = '|', value = {
      "3x               | period '3x' is not a duration; expected",
      "3 s              | period '3 s' is not a duration; expected",
      "3S               | period '3S' is not a duration; expected",
      "s                | period 's' is not a duration; expected",
      "1m30             | period '1m30' is not a duration; expected",
      "PT               | period 'PT' is not a duration; expected",
      "'\"60\"'         | period \"60\" is a string with no unit; write 60 unquoted for seconds, or give a unit (60s, 60ms)",
      "'\"\"'           | period is an empty string; expected",
      "0.0000001        | period 0.0000001 is not a whole number of microseconds",
      "1.0000005s       | period 1.0000005s is not a whole number of microseconds",
      "PT0.0000005S     | period PT0.0000005S is not a whole number of microseconds",
      "3651d            | period 3651d is too long; the maximum is 3650d (ten years)",
      "315360001        | period 315360001 is too long; the maximum is 3650d (ten years)",
      ".nan             | period must be finite, found .nan",
  })
  void malformedDurationsAreErrorsThatSayWhy(String yaml, String message) {
    assertThatThrownBy(() -> periodMicros(yaml.strip()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("t:5:17: " + message);
  }

  @ParameterizedTest(name = "{0} is {1} µs outside YAML")
  @CsvSource(delimiter = '|', value = {
      "60          | 60000000",
      "0.5         | 500000",
      "1e-3        | 1000",
      "500ms       | 500000",
      "1m30s       | 90000000",
      "pt0.5s      | 500000",
      "' 2s '      | 2000000",
      "-3s         | -3000000",
  })
  void otherReadersShareTheSyntaxAndReadAPlainNumberAsSeconds(String text, long micros) {
    assertThat(ConfigLoader.parseDuration(text, "d")).isEqualTo(Duration.ofNanos(micros * 1000));
  }

  @ParameterizedTest(name = "{0} is rejected outside YAML: {1}")
  @CsvSource(delimiter = '|', value = {
      "soon        | --poll-interval 'soon' is not a duration; expected a number of seconds (60, 0.5) or",
      "1.0000005   | --poll-interval 1.0000005 is not a whole number of microseconds",
      "3651d       | --poll-interval 3651d is too long; the maximum is 3650d (ten years)",
      "''          | --poll-interval is an empty string",
  })
  void otherReadersGetTheSameMessages(String text, String message) {
    assertThatThrownBy(() -> ConfigLoader.parseDuration(text, "--poll-interval"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith(message);
  }

  @ParameterizedTest
  @CsvSource({"60000000, 60s", "500000, 500ms", "1500, 1500us", "86400000000, 86400s"})
  void durationsAreShownInTheirShortestExactUnit(long micros, String shown) {
    assertThat(Durations.format(micros)).isEqualTo(shown);
  }
}
