package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.Window;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class TtlConverterTest {
  final TtlConverter converter = new TtlConverter();

  @Test
  void everyWrittenFormIsRead() {
    assertThat(converter.convert("90")).isEqualTo(Duration.ofSeconds(90));
    assertThat(converter.convert("90s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(converter.convert("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(converter.convert("1h30m")).isEqualTo(Duration.ofMinutes(90));
    assertThat(converter.convert("2d")).isEqualTo(Duration.ofDays(2));
    assertThat(converter.convert("PT1H")).isEqualTo(Duration.ofHours(1));
    assertThat(converter.convert("pt10m")).isEqualTo(Duration.ofMinutes(10));
    // As in configuration files: fractions and seconds as decimals.
    assertThat(converter.convert("1.5h")).isEqualTo(Duration.ofMinutes(90));
    assertThat(converter.convert("0.25")).isEqualTo(Duration.ofMillis(250));
  }

  @Test
  void anythingElseIsAnErrorShowingTheForms() {
    for (String bad : new String[] {"", "soon", "10 s", "1w", "P"}) {
      assertThatThrownBy(() -> converter.convert(bad)).as(bad).isInstanceOf(TypeConversionException.class)
          .hasMessageContaining("expected a number of seconds (60, 0.5) or a duration string such as 500ms");
    }
    assertThatThrownBy(() -> converter.convert("99999999999999999999d")).hasMessageContaining("is too long");
    assertThatThrownBy(() -> converter.convert("0s")).hasMessage("must be at least 1ms, was '0s'");
    assertThatThrownBy(() -> converter.convert("500us")).hasMessage("must be at least 1ms, was '500us'");
    assertThatThrownBy(() -> converter.convert("-5s")).hasMessage("must be at least 1ms, was '-5s'");
    assertThatThrownBy(() -> converter.convert("PT-1H")).hasMessage("must be at least 1ms, was 'PT-1H'");
  }

  @Test
  void aRuleKeyTtlIsTheLongestTheStoreSetsOnAWritePlusItsSlack() {
    Rule twoWindows = Rule.builder("a").window(5, Duration.ofSeconds(3)).window(20, Duration.ofMinutes(1)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(twoWindows)).isEqualTo(61_000);
    Rule override = Rule.builder("b").window(5, Duration.ofSeconds(3)).override(new KeyOverride(List.of("vip"),
        List.of(Window.of(9, Duration.ofHours(1))))).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(override)).isEqualTo(3_601_000);
    Rule submilli = Rule.builder("c").window(1, Duration.ofNanos(1_501_000)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(submilli)).isEqualTo(1_002);
    Rule fixed = Rule.builder("f").algorithm(Algorithm.FIXED_WINDOW).window(100, Duration.ofDays(1)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(fixed)).isEqualTo(86_401_000);
    // 1 h in 10 buckets of 6 min: the newest bucket counts for 11 of them.
    Rule sliding = Rule.builder("s").algorithm(Algorithm.SLIDING_WINDOW).window(100, Duration.ofHours(1)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(sliding)).isEqualTo(3_961_000);
    Rule finer = Rule.builder("s2").algorithm(Algorithm.SLIDING_WINDOW).precision(60).window(100, Duration.ofHours(1))
        .build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(finer)).isEqualTo(3_661_000);
    // 3 per 10 s: an interval of 3,333,334 µs, three of them 10,000,002 µs.
    Rule bucket = Rule.builder("t").algorithm(Algorithm.TOKEN_BUCKET).window(3, Duration.ofSeconds(10)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(bucket)).isEqualTo(11_001);
    Rule shaped = Rule.builder("d").algorithm(Algorithm.LEAKY_BUCKET).maxWait(Duration.ofSeconds(30))
        .window(1, Duration.ofSeconds(1)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(shaped)).isEqualTo(32_000);
    Rule defaultWait = Rule.builder("e").algorithm(Algorithm.LEAKY_BUCKET).window(10, Duration.ofSeconds(1)).build();
    assertThat(KeysFixTtlCommand.ruleTtlMillis(defaultWait)).isEqualTo(3_000);
  }
}
