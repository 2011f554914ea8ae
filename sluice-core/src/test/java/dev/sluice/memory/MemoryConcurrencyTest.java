package dev.sluice.memory;

import dev.sluice.Ticker;
import dev.sluice.conformance.ConcurrencyConformanceTest;
import dev.sluice.spi.Store;

/** On the store's real monotonic clock, which the test reads too. */
class MemoryConcurrencyTest extends ConcurrencyConformanceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(Ticker.system()).build();
  }

  @Override
  protected Ticker storeClock() {
    return Ticker.system();
  }
}
