package dev.sluice.server;

import dev.sluice.spi.Store;

/** Problem bodies on a store in process memory, which a test can take down. */
class MemoryProblemBodyTest extends AbstractProblemBodyTest {
  private final ControllableStore store = new ControllableStore();

  @Override
  protected Store newStore() {
    return store;
  }

  @Override
  protected void storeDown(boolean down) {
    store.down = down;
  }
}
