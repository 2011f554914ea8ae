package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class ByteSizeConverterTest {
  final ByteSizeConverter sizes = new ByteSizeConverter();

  @Test
  void sizesAreBytesOrBinaryMultiples() {
    assertThat(sizes.convert("1048576")).isEqualTo(1L << 20);
    assertThat(sizes.convert("512k")).isEqualTo(512L << 10);
    assertThat(sizes.convert("64m")).isEqualTo(64L << 20);
    assertThat(sizes.convert("64MB")).isEqualTo(64L << 20);
    assertThat(sizes.convert("1g")).isEqualTo(1L << 30);
    assertThat(sizes.convert("2GiB")).isEqualTo(2L << 30);
  }

  @Test
  void anythingElseIsAnErrorNamingTheValue() {
    assertThatThrownBy(() -> sizes.convert("lots")).isInstanceOf(TypeConversionException.class)
        .hasMessage("'lots' is not a size: write bytes, or a number with k, m or g (64m, 1g)");
    assertThatThrownBy(() -> sizes.convert("-1m")).hasMessageContaining("'-1m' is not a size");
    assertThatThrownBy(() -> sizes.convert("0")).hasMessage("'0' must be at least 1 byte");
    assertThatThrownBy(() -> sizes.convert("99999999999999999t")).hasMessage("'99999999999999999t' is too large");
    assertThatThrownBy(() -> sizes.convert("99999999999999999999")).hasMessageContaining("is not a size");
  }
}
