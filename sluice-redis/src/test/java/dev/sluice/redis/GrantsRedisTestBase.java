package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Grants;
import dev.sluice.spi.Grants.Grant;
import dev.sluice.spi.ResolvedItem;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** {@link GrantsContract} on a Redis store, takes and decisions at explicit times. */
abstract class GrantsRedisTestBase extends GrantsContract {
  private RedisStore store;

  abstract String uri();

  @BeforeEach
  void open() {
    store = RedisStore.builder(uri()).ttlSlack(Duration.ofMinutes(10)).build();
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Override
  Grants grants() {
    return store.grants().orElseThrow();
  }

  @Override
  Grant take(ResolvedItem item, long units, long at) {
    return ((RedisGrants) grants()).takeAt(item, units, at).toCompletableFuture().join();
  }

  @Override
  ItemDecision decide(ResolvedItem item, long at) {
    return store.decideSync(new Batch(List.of(item), at)).get(0);
  }
}
