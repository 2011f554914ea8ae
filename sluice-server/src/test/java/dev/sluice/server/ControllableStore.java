package dev.sluice.server;

import dev.sluice.ItemDecision;
import dev.sluice.RuleSet;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A remote-like store over the memory store that a test can take down (every call fails, as an
 * unreachable Redis would) or hold (decisions wait until released, as a slow one would).
 */
final class ControllableStore implements Store {
  private final MemoryStore memory = MemoryStore.create();
  private final List<Runnable> held = new CopyOnWriteArrayList<>();
  final AtomicInteger pending = new AtomicInteger();
  volatile boolean down;
  volatile boolean hold;

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    if (down) {
      return CompletableFuture.failedFuture(new java.io.IOException("store unreachable"));
    }
    if (!hold) {
      return CompletableFuture.completedFuture(memory.decideSync(batch));
    }
    CompletableFuture<List<ItemDecision>> f = new CompletableFuture<>();
    pending.incrementAndGet();
    held.add(() -> f.complete(memory.decideSync(batch)));
    return f;
  }

  /** Lets every held decision complete. */
  void release() {
    hold = false;
    for (Runnable r : held) {
      r.run();
    }
    held.clear();
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return down ? CompletableFuture.failedFuture(new java.io.IOException("store unreachable")) : memory.reset(rule, key);
  }

  @Override
  public void check(dev.sluice.Rule rule) {
    memory.check(rule);
  }

  /** The memory store's policies, so that rules with bans and lists can be served too. */
  @Override
  public java.util.Optional<dev.sluice.spi.PolicyRecords> records() {
    return memory.records();
  }

  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    memory.rulesChanged(before, after);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return CompletableFuture.completedFuture(!down);
  }

  @Override
  public String describe() {
    return "controllable memory store";
  }

  @Override
  public void close() {
    memory.close();
  }
}
