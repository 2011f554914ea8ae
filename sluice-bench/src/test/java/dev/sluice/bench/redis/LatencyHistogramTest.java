package dev.sluice.bench.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class LatencyHistogramTest {

  @Test
  void quantilesAreWithinOnePercentOfTheExactValues() {
    LatencyHistogram h = new LatencyHistogram();
    for (long v = 1; v <= 1_000_000; v++) {
      h.record(v * 37);
    }
    assertThat(h.count()).isEqualTo(1_000_000);
    assertThat((double) h.quantile(0.5)).isCloseTo(500_000 * 37.0, within(500_000 * 37.0 * 0.01));
    assertThat((double) h.quantile(0.99)).isCloseTo(990_000 * 37.0, within(990_000 * 37.0 * 0.01));
    assertThat((double) h.quantile(0.999)).isCloseTo(999_000 * 37.0, within(999_000 * 37.0 * 0.01));
  }

  @Test
  void smallValuesAreExact() {
    LatencyHistogram h = new LatencyHistogram();
    h.record(3);
    h.record(5);
    h.record(100);
    assertThat(h.quantile(0.34)).isEqualTo(5);
    assertThat(h.quantile(1.0)).isEqualTo(100);
  }
}
