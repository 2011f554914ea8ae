package dev.sluice.memory;

import dev.sluice.conformance.AlgorithmBoundProperties;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;

class MemoryAlgorithmBoundProperties extends AlgorithmBoundProperties {
  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(new FakeTicker()).build();
  }
}
