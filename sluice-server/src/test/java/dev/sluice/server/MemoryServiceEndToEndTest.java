package dev.sluice.server;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;

/** The end-to-end suite on the memory store. */
class MemoryServiceEndToEndTest extends AbstractServiceEndToEndTest {
  @Override
  protected Store newStore() {
    return MemoryStore.create();
  }
}
