package dev.sluice.memory;

import dev.sluice.conformance.TransactionConformanceTest;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;

class MemoryTransactionTest extends TransactionConformanceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.builder().ticker(new FakeTicker()).build();
  }
}
