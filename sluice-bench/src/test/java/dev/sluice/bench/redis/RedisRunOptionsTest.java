package dev.sluice.bench.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RedisRunOptionsTest {

  @Test
  void defaultsRunEveryModeForFifteenSecondsWithSixtyFourInFlight() {
    RedisRun.Options o = RedisRun.Options.parse(new String[0]);
    assertThat(o.seconds()).isEqualTo(15);
    assertThat(o.inflight()).isEqualTo(64);
    assertThat(o.keys()).isEqualTo(10_000);
    assertThat(o.modes()).containsExactly("keys", "hot", "keys-admitting", "hot-admitting");
  }

  @Test
  void unknownModesAndOptionsAreNamed() {
    assertThatThrownBy(() -> RedisRun.Options.parse(new String[] {"--modes", "keys,cold"}))
        .hasMessageContaining("unknown mode 'cold'");
    assertThatThrownBy(() -> RedisRun.Options.parse(new String[] {"--second", "3"}))
        .hasMessageContaining("unknown option(s) [second]");
    assertThatThrownBy(() -> RedisRun.Options.parse(new String[] {"--seconds", "0"}))
        .hasMessageContaining("--seconds must be > 0");
  }
}
