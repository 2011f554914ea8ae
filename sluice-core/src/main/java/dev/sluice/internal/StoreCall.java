package dev.sluice.internal;

import dev.sluice.ItemDecision;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The stage that asks a remote store: at most {@code maxInFlight} calls waiting at once, each
 * waited for at most the store timeout. A local store is called directly, without either.
 */
final class StoreCall {
  private final Store store;
  private final long timeoutMillis;
  private final int maxInFlight;
  /** Store calls made and not yet answered, whether or not their callers still wait. */
  private final AtomicInteger inFlight = new AtomicInteger();

  StoreCall(Store store, long timeoutMillis, int maxInFlight) {
    this.store = store;
    this.timeoutMillis = timeoutMillis;
    this.maxInFlight = maxInFlight;
  }

  long timeoutMillis() {
    return timeoutMillis;
  }

  /**
   * The store's decisions of {@code batch}, waited for on the caller's own thread: a slow store
   * holds callers at most the timeout and starts no thread of its own.
   */
  List<ItemDecision> decide(Batch batch) throws InterruptedException, ExecutionException, TimeoutException {
    return bounded(() -> store.decide(batch)).get(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /** As {@link #decide}, without waiting: the stage fails on a timeout. */
  CompletableFuture<List<ItemDecision>> decideAsync(Batch batch) {
    return timed(() -> store.decide(batch));
  }

  /** Whether the store admits {@code item} alone, without waiting: the stage fails on a timeout. */
  CompletableFuture<Boolean> tryAcquireAsync(ResolvedItem item) {
    return timed(() -> store.tryAcquireAsync(item));
  }

  private <T> CompletableFuture<T> timed(Supplier<CompletionStage<T>> storeCall) {
    CompletableFuture<T> stage;
    try {
      // A copy, so that the timeout completes the caller's stage and never the store's own
      // future, whose completion frees the in-flight slot.
      stage = bounded(storeCall).copy();
    } catch (RuntimeException e) {
      // A store that fails before returning a stage has failed all the same: failure modes decide.
      stage = CompletableFuture.failedFuture(e);
    }
    // orTimeout arms one task on the JDK's shared delay scheduler (a single thread for the whole
    // JVM), cancelled when the store answers: no thread per call.
    return stage.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /**
   * Calls the store, unless {@code maxInFlight} calls already wait for its answer: then the call
   * is not made and the returned stage has failed with {@link StoreOverloadedException}, so that
   * failure modes decide at once instead of adding to a queue that a slow store does not drain.
   *
   * <p>A slot is freed when the store answers or fails, not when its caller stops waiting: a call
   * that timed out may still sit in the client's queue or on the wire, and counts until the
   * client gives up on it (the Redis store's command timeout).
   */
  private <T> CompletableFuture<T> bounded(Supplier<CompletionStage<T>> storeCall) {
    if (inFlight.incrementAndGet() > maxInFlight) {
      inFlight.decrementAndGet();
      return CompletableFuture.failedFuture(new StoreOverloadedException(maxInFlight));
    }
    CompletableFuture<T> call;
    try {
      call = storeCall.get().toCompletableFuture();
    } catch (RuntimeException | Error e) {
      inFlight.decrementAndGet();
      throw e;
    }
    // A dependent of its own, never completed by anyone else, so that it always runs.
    call.whenComplete((answer, err) -> inFlight.decrementAndGet());
    return call;
  }
}
