package dev.sluice.server.rlqs;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;

/** The Rate Limit Quota Service on the memory store, counting on the fake clock. */
class MemoryRateLimitQuotaServiceTest extends AbstractRateLimitQuotaServiceTest {
  @Override
  protected Store newStore(FakeTicker ticker) {
    return MemoryStore.builder().ticker(ticker).build();
  }
}
