package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Grants;
import dev.sluice.spi.Grants.Grant;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import java.util.List;

/** {@link GrantsContract} on the memory store, its ticker set to each take's time. */
class GrantsMemoryTest extends GrantsContract {
  private final FakeTicker ticker = new FakeTicker(T0);
  private final MemoryStore store = MemoryStore.builder().ticker(ticker).build();

  @Override
  Grants grants() {
    return store.grants().orElseThrow();
  }

  @Override
  Grant take(ResolvedItem item, long units, long at) {
    ticker.setMicros(at);
    return grants().take(item, units).toCompletableFuture().join();
  }

  @Override
  ItemDecision decide(ResolvedItem item, long at) {
    return store.decideSync(new Batch(List.of(item), at)).get(0);
  }
}
