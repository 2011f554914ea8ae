package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** SPEC §8: a slow store never piles up requests — store calls in flight are bounded. */
class StoreInFlightBoundTest {
  final FakeTicker ticker = new FakeTicker();
  final HeldStore store = new HeldStore(MemoryStore.builder().ticker(ticker).build());
  final Rule closed = Rule.builder("closed").window(10, Duration.ofMinutes(1)).failureMode(FailureMode.CLOSED).build();
  final List<Throwable> errors = new CopyOnWriteArrayList<>();
  final DecisionListener recording = new DecisionListener() {
    @Override
    public void onStoreError(Request request, Throwable error) {
      errors.add(error);
    }
  };

  /**
   * A remote-looking store whose answers wait until the test releases them, as a stalled server's
   * do. Each answer is the memory store's decision at release time.
   */
  static final class HeldStore implements Store {
    record Held(Batch batch, CompletableFuture<List<ItemDecision>> answer) {}

    final Store behind;
    final ConcurrentLinkedQueue<Held> held = new ConcurrentLinkedQueue<>();
    volatile int calls;

    HeldStore(Store behind) {
      this.behind = behind;
    }

    @Override
    public synchronized CompletionStage<List<ItemDecision>> decide(Batch batch) {
      calls++;
      CompletableFuture<List<ItemDecision>> f = new CompletableFuture<>();
      held.add(new Held(batch, f));
      return f;
    }

    /** Answers the oldest held call; returns it. */
    Held releaseOne() {
      Held h = held.remove();
      h.answer.complete(behind.decideSync(h.batch));
      return h;
    }

    @Override
    public CompletionStage<Void> reset(String rule, String key) {
      return behind.reset(rule, key);
    }

    @Override
    public CompletionStage<Boolean> ping() {
      return CompletableFuture.completedFuture(true);
    }

    @Override
    public String describe() {
      return "held";
    }

    @Override
    public void close() {
      behind.close();
    }
  }

  RateLimiter limiter(int maxInFlight, Duration storeTimeout) {
    return Sluice.builder().rules(closed).store(store).ticker(ticker).storeTimeout(storeTimeout)
        .maxInFlight(maxInFlight).listener(recording).build();
  }

  @Test
  void callsBeyondMaxInFlightAreNotMadeAndDegradeAtOnce() {
    RateLimiter limiter = limiter(3, Duration.ofSeconds(30));
    List<CompletableFuture<Decision>> waiting = List.of(
        limiter.acquireAsync(Request.of("closed", "a")).toCompletableFuture(),
        limiter.acquireAsync(Request.of("closed", "b")).toCompletableFuture(),
        limiter.acquireAsync(Request.of("closed", "c")).toCompletableFuture());

    long start = System.nanoTime();
    Decision sync = limiter.acquire(Request.of("closed", "d"));
    Decision async = limiter.acquireAsync(Request.of("closed", "e")).toCompletableFuture().getNow(null);
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertThat(store.calls).isEqualTo(3);
    assertThat(tookMs).as("neither waited for the 30 s store timeout").isLessThan(10_000);
    for (Decision d : new Decision[] {sync, async}) {
      assertThat(d).as("the async decision is complete on return").isNotNull();
      assertThat(d.degraded()).isTrue();
      assertThat(d.allowed()).isFalse();
      assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);
    }
    assertThat(errors).hasSize(2).allSatisfy(e -> assertThat(e).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("3 store calls").hasMessageContaining("maxInFlight"));
    assertThat(waiting).noneMatch(CompletableFuture::isDone);

    store.releaseOne();
    assertThat(waiting.get(0).join().degraded()).isFalse();
    Decision afterRelease = limiter.acquireAsync(Request.of("closed", "f")).toCompletableFuture().getNow(null);
    assertThat(afterRelease).as("the call was made and waits for the store").isNull();
    assertThat(store.calls).isEqualTo(4);
  }

  @Test
  void aCallThatTimedOutHoldsItsSlotUntilTheStoreAnswers() {
    RateLimiter limiter = limiter(1, Duration.ofMillis(50));
    Decision timedOut = limiter.acquireAsync(Request.of("closed", "a")).toCompletableFuture().join();
    assertThat(timedOut.degraded()).isTrue();
    assertThat(errors).hasSize(1);
    assertThat(errors.get(0)).isInstanceOf(TimeoutException.class).hasMessage("the store did not answer within 50 ms");
    assertThat(store.held.peek().answer.isDone()).as("the timeout completes the caller's stage, not the store's")
        .isFalse();

    Decision refused = limiter.acquire(Request.of("closed", "b"));
    assertThat(refused.degraded()).isTrue();
    assertThat(store.calls).as("the late call still counts while the store has not answered it").isEqualTo(1);

    store.releaseOne();
    assertThat(store.held).isEmpty();
    CompletableFuture<Decision> next = limiter.acquireAsync(Request.of("closed", "c")).toCompletableFuture();
    assertThat(store.calls).isEqualTo(2);
    store.releaseOne();
    assertThat(next.join().degraded()).isFalse();
    assertThat(next.join().allowed()).isTrue();
  }

  /** The store's late answer was committed: the caller saw a degraded denial, the store counted it. */
  @Test
  void aLateAnswerIsCountedByTheStoreThoughItsCallerWasDeniedDegraded() {
    RateLimiter limiter = limiter(100, Duration.ofMillis(50));
    Decision seen = limiter.acquire(Request.of("closed", "k"));
    assertThat(seen.allowed()).isFalse();
    assertThat(seen.degraded()).isTrue();
    store.releaseOne();

    // Read straight from the store behind: through the held store, the 50 ms timeout would race
    // the release on a loaded machine.
    RateLimiter direct = Sluice.builder().rules(closed).store(store.behind).build();
    assertThat(direct.acquire(Request.of("closed", "k", 0)).items().get(0).windows().get(0).remaining())
        .as("over-counted by one, never over-admitted").isEqualTo(9);
  }

  @Test
  void aStoreThatThrowsFreesItsSlot() {
    FlakyStore throwing = new FlakyStore(MemoryStore.builder().ticker(ticker).build()).mode(FlakyStore.Mode.THROWS);
    RateLimiter limiter = Sluice.builder().rules(closed).store(throwing).ticker(ticker).maxInFlight(1)
        .listener(recording).build();
    for (int i = 0; i < 3; i++) {
      assertThat(limiter.acquire(Request.of("closed", "k")).degraded()).isTrue();
    }
    assertThat(throwing.decideCalls()).as("every call was made: none kept a slot").isEqualTo(3);
    assertThat(errors).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class));
  }

  @Test
  void maxInFlightMustBePositive() {
    assertThatThrownBy(() -> Sluice.builder().maxInFlight(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxInFlight must be >= 1, was 0");
  }
}
