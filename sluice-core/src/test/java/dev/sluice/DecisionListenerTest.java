package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class DecisionListenerTest {
  final FakeTicker ticker = new FakeTicker();
  final Rule rule = Rule.builder("api").window(1, Duration.ofSeconds(1)).build();
  final FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(ticker).build());

  record Seen(Request request, Decision decision, long storeNanos) {}

  static final class Recording implements DecisionListener {
    final List<Seen> decisions = new CopyOnWriteArrayList<>();
    final List<Throwable> errors = new CopyOnWriteArrayList<>();

    @Override
    public void onDecision(Request request, Decision decision, long storeNanos) {
      decisions.add(new Seen(request, decision, storeNanos));
    }

    @Override
    public void onStoreError(Request request, Throwable error) {
      errors.add(error);
    }
  }

  static final class Throwing implements DecisionListener {
    @Override
    public void onDecision(Request request, Decision decision, long storeNanos) {
      throw new IllegalStateException("listener bug");
    }

    @Override
    public void onStoreError(Request request, Throwable error) {
      throw new IllegalStateException("listener bug");
    }
  }

  RateLimiter limiter(DecisionListener... listeners) {
    Sluice.Builder b = Sluice.builder().rules(rule).ticker(ticker).store(store);
    for (DecisionListener l : listeners) {
      b.listener(l);
    }
    return b.build();
  }

  @Test
  void everyDecisionIsReportedOnceWithItsRequest() {
    Recording rec = new Recording();
    RateLimiter limiter = limiter(rec);
    Request first = Request.of("api", "k");
    Decision d1 = limiter.acquire(first);
    Decision d2 = limiter.acquireAsync(first).toCompletableFuture().join();
    assertThat(rec.decisions).extracting(Seen::request).containsExactly(first, first);
    assertThat(rec.decisions).extracting(Seen::decision).containsExactly(d1, d2);
    assertThat(d2.allowed()).isFalse();
    assertThat(rec.decisions).allSatisfy(s -> assertThat(s.storeNanos()).isNotNegative());
    assertThat(rec.errors).isEmpty();
  }

  @Test
  void rejectedRequestsAreNotDecisions() {
    Recording rec = new Recording();
    RateLimiter limiter = limiter(rec);
    assertThatThrownBy(() -> limiter.acquire("missing", "k")).isInstanceOf(IllegalArgumentException.class);
    limiter.acquireAsync(Request.of("missing", "k"));
    assertThat(rec.decisions).isEmpty();
  }

  @Test
  void storeErrorsAreReportedWithTheStoresOwnException() {
    Recording rec = new Recording();
    RateLimiter limiter = limiter(rec);
    store.mode(FlakyStore.Mode.FAILS);
    Decision sync = limiter.acquire("api", "k");
    Decision async = limiter.acquireAsync(Request.of("api", "k")).toCompletableFuture().join();
    store.mode(FlakyStore.Mode.THROWS);
    limiter.acquire("api", "k");
    assertThat(sync.degraded()).isTrue();
    assertThat(async.degraded()).isTrue();
    assertThat(rec.errors).hasSize(3).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class));
    assertThat(rec.errors).extracting(Throwable::getMessage).containsExactly("store refused the connection",
        "store refused the connection", "store client is closed");
    assertThat(rec.decisions).extracting(Seen::decision).allSatisfy(d -> assertThat(d.degraded()).isTrue());
  }

  @Test
  void aThrowingListenerChangesNoDecisionAndSilencesNoOtherListener() {
    Recording rec = new Recording();
    RateLimiter limiter = limiter(new Throwing(), rec);
    assertThat(limiter.acquire("api", "k").allowed()).isTrue();
    assertThat(limiter.acquireAsync(Request.of("api", "k")).toCompletableFuture().join().allowed()).isFalse();
    store.mode(FlakyStore.Mode.FAILS);
    // Another key: "k" was just denied, and that denial, still holding, is answered without the store.
    Decision degraded = limiter.acquire("api", "other");
    assertThat(degraded.allowed()).isTrue();
    assertThat(degraded.degraded()).isTrue();
    Decision degradedAsync = limiter.acquireAsync(Request.of("api", "other")).toCompletableFuture().join();
    assertThat(degradedAsync.degraded()).isTrue();
    assertThat(rec.decisions).hasSize(4);
    assertThat(rec.errors).hasSize(2);
  }
}
