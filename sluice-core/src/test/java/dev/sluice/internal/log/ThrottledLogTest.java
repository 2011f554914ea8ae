package dev.sluice.internal.log;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.FakeTicker;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** At most one line per kind every 10 s, the next one saying how many were held back. */
class ThrottledLogTest {
  final FakeTicker ticker = new FakeTicker();
  final List<String> lines = new CopyOnWriteArrayList<>();
  final ThrottledLog log = new ThrottledLog(ticker, lines::add);

  @Test
  void theFirstLineOfAKindIsWrittenAndTheOthersWithinTenSecondsAreCountedInTheNextOne() {
    log.log("store", () -> "request failed: 1");
    assertThat(lines).containsExactly("request failed: 1");

    for (int i = 0; i < 41; i++) {
      ticker.advanceMicros(200_000);
      log.log("store", () -> "request failed: more");
    }
    ticker.advanceMicros(ThrottledLog.INTERVAL_MICROS - 41 * 200_000L - 1);
    log.log("store", () -> "request failed: 42");
    assertThat(lines).as("nothing within 9.999999 s").hasSize(1);

    ticker.advanceMicros(1);
    log.log("store", () -> "request failed: 43");
    assertThat(lines).containsExactly("request failed: 1",
        "request failed: 43 (and 42 more like it in the last 10.0 s, not logged)");
  }

  @Test
  void kindsAreThrottledApart() {
    log.log("a", () -> "a 1");
    log.log("b", () -> "b 1");
    log.log("a", () -> "a 2");
    assertThat(lines).containsExactly("a 1", "b 1");
  }

  @Test
  void aMessageHeldBackIsNeverBuilt() {
    log.log("a", () -> "a 1");
    log.log("a", () -> {
      throw new AssertionError("built");
    });
    assertThat(lines).containsExactly("a 1");
  }
}
