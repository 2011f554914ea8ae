package dev.sluice.memory;

import dev.sluice.conformance.KeysAndRulesConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;

class MemoryKeysAndRulesTest extends KeysAndRulesConformanceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(new FakeTicker()).build();
  }
}
