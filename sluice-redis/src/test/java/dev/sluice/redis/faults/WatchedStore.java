package dev.sluice.redis.faults;

import dev.sluice.ItemDecision;
import dev.sluice.RuleSet;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real store seen from the limiter's side: how many of its calls wait for an answer at once,
 * which is the queue a slow store could grow.
 */
final class WatchedStore implements Store {
  private final Store behind;
  private final AtomicInteger waiting = new AtomicInteger();
  private final AtomicInteger mostWaiting = new AtomicInteger();

  WatchedStore(Store behind) {
    this.behind = behind;
  }

  /** Calls made and not answered (or failed) yet. */
  int waiting() {
    return waiting.get();
  }

  /** The largest {@link #waiting()} seen since the last {@link #resetMostWaiting()}. */
  int mostWaiting() {
    return mostWaiting.get();
  }

  void resetMostWaiting() {
    mostWaiting.set(waiting.get());
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    mostWaiting.accumulateAndGet(waiting.incrementAndGet(), Math::max);
    CompletableFuture<List<ItemDecision>> f;
    try {
      f = behind.decide(batch).toCompletableFuture();
    } catch (RuntimeException e) {
      waiting.decrementAndGet();
      throw e;
    }
    f.whenComplete((items, err) -> waiting.decrementAndGet());
    return f;
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return behind.reset(rule, key);
  }

  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    behind.rulesChanged(before, after);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return behind.ping();
  }

  @Override
  public String describe() {
    return behind.describe();
  }

  @Override
  public void close() {
    behind.close();
  }
}
