package dev.sluice.memory;

import dev.sluice.conformance.AlgorithmTracesConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;

class MemoryAlgorithmTracesTest extends AlgorithmTracesConformanceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(new FakeTicker()).build();
  }
}
