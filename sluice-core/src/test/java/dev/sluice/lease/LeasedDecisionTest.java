package dev.sluice.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DecisionListener;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.WindowState;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A decision of a leased rule says whether it was answered from a lease, and then explains itself
 * from this instance's view: the store's remaining at its last take plus the units it holds.
 */
class LeasedDecisionTest {
  final FakeTicker ticker = new FakeTicker();
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();
  /** 1,000 per second, 10 % slack: a budget of 100 units; alone, an instance holds at most 50. */
  final Rule leased = Rule.builder("api").window(1000, Duration.ofSeconds(1))
      .lease(new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0.1)).build();
  final AtomicInteger rounds = new AtomicInteger();
  final RateLimiter limiter = Sluice.builder().rules(leased).store(new FlakyStore(store).withLeases().shared())
      .ticker(ticker).sleeper(ticker).listener(new DecisionListener() {
        @Override
        public void onLeasesHeld(int keys, long units) {
          rounds.incrementAndGet();
        }
      }).build();

  /**
   * The first request of a key goes to the store and starts the keeper, whose first report tells
   * the instance how many share the budget: from then on it leases.
   */
  void firstRequestAndRound() throws InterruptedException {
    limiter.acquire("api", "all");
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (rounds.get() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(rounds.get()).isPositive();
  }

  @AfterEach
  void close() {
    limiter.close();
  }

  @Test
  void anItemAdmittedFromTheUnitsHeldIsLeasedAndCountsThemInItsRemaining() throws InterruptedException {
    firstRequestAndRound(); // decided by the store: 999 left
    ItemDecision d = limiter.acquire("api", "all").items().get(0); // the first take: 50 units leave the store's window
    assertThat(d.allowed()).isTrue();
    assertThat(d.leased()).isTrue();
    assertThat(d.toString()).contains("leased=true");
    WindowState w = d.windows().get(0);
    // The store had 949 left at the take; 49 of the 50 units are still held after one admission.
    assertThat(w.remaining()).isEqualTo(949 + 49);
    assertThat(w.limit()).isEqualTo(1000);
    assertThat(w.retryAfterMs()).isZero();
    assertThat(w.exceeded()).isFalse();
  }

  @Test
  void itemsTheStoreDecidesAreNotLeased() throws InterruptedException {
    firstRequestAndRound();
    assertThat(limiter.acquire("api", "all").items().get(0).leased()).isTrue();
    // A peek always asks the store, and sees the units taken as consumed.
    ItemDecision peek = limiter.acquire("api", "all", 0).items().get(0);
    assertThat(peek.leased()).isFalse();
    assertThat(peek.windows().get(0).remaining()).isEqualTo(949);
    // A request at an explicit time is decided by the store.
    ItemDecision timed = limiter.acquire(Request.of(Item.of("api", "all")).atMicros(ticker.nowMicros())).items().get(0);
    assertThat(timed.leased()).isFalse();
    assertThat(peek).isNotEqualTo(new ItemDecision(peek.rule(), peek.key(), peek.cost(), peek.allowed(),
        peek.reason(), peek.waitMs(), peek.windows(), peek.shadow(), peek.blockedMs(), true));
  }
}
