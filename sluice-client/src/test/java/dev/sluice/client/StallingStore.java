package dev.sluice.client;

import dev.sluice.ItemDecision;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A memory store that can be told to stall: its decisions then fail after {@code stallMillis}, as
 * a remote store's client gives up on a call that gets no answer. Pings still answer, as a store
 * that is up but slow does.
 */
final class StallingStore implements Store {
  private final MemoryStore memory = MemoryStore.builder().build();
  private final long stallMillis;
  private volatile boolean stalled;

  StallingStore(long stallMillis) {
    this.stallMillis = stallMillis;
  }

  void stall(boolean s) {
    this.stalled = s;
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    if (!stalled) {
      return memory.decide(batch);
    }
    return new CompletableFuture<List<ItemDecision>>().completeOnTimeout(null, stallMillis, TimeUnit.MILLISECONDS)
        .thenApply(none -> {
          throw new java.util.concurrent.CompletionException(new TimeoutException("stalled"));
        });
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return memory.reset(rule, key);
  }

  @Override
  public void rulesChanged(dev.sluice.RuleSet before, dev.sluice.RuleSet after) {
    memory.rulesChanged(before, after);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return CompletableFuture.completedFuture(true);
  }

  @Override
  public String describe() {
    return "a stalling memory store";
  }

  @Override
  public void close() {
    memory.close();
  }
}
