package dev.sluice.server;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FlakyStore;

/** Leases through the service on the memory store, the other instances in the same process. */
class MemoryLeasesServiceTest extends AbstractLeasesServiceTest {
  @Override
  protected Store newStore() {
    return MemoryStore.create();
  }

  @Override
  protected Store sameStateAs(Store serviceStore) {
    // The service closes its store: another instance's closing must not.
    return new FlakyStore(serviceStore).withLeases().shared();
  }
}
