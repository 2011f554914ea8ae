package dev.sluice.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.Item;
import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.internal.lease.UsageReport;
import dev.sluice.memory.MemoryStore;
import dev.sluice.policy.LiveLimit;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Leased mode through limiters as users build them, several on one memory store: units are taken
 * from the store's exact state, admitted locally, given back; the store never admits past its
 * limit, and over-admission in a window never passes the budget.
 */
class LeasedModeTest {
  final FakeTicker ticker = new FakeTicker();
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();
  /** 1,000 per second, 10 % slack: a budget of 100 units; alone, an instance holds at most 50. */
  final Rule leased = Rule.builder("api").window(1000, Duration.ofSeconds(1))
      .lease(new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0.1)).build();
  final List<RateLimiter> limiters = new ArrayList<>();

  final Map<RateLimiter, AtomicInteger> rounds = new ConcurrentHashMap<>();

  RateLimiter limiter() {
    return limiter(false);
  }

  /** @param policies whether the store lends its policies (live limits) too */
  RateLimiter limiter(boolean policies) {
    AtomicInteger done = new AtomicInteger();
    DecisionListener counts = new DecisionListener() {
      @Override
      public void onLeasesHeld(int keys, long units) {
        done.incrementAndGet();
      }
    };
    // Limiters share the store: one closing must not close it for the others.
    FlakyStore lent = new FlakyStore(store).withLeases().shared();
    RateLimiter l = Sluice.builder().rules(leased).store(policies ? lent.withPolicies() : lent).ticker(ticker)
        .sleeper(ticker).listener(counts).build();
    limiters.add(l);
    rounds.put(l, done);
    return l;
  }

  /**
   * Waits until {@code l}'s keeper has made its first report and read the board's answer, which it
   * does as soon as it holds a key (its first request of a leased rule).
   */
  void awaitFirstRound(RateLimiter l) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (rounds.get(l).get() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(rounds.get(l).get()).as("a report round").isPositive();
  }

  /** Moves the clock one report interval on and waits until each of {@code ls} has made a round since. */
  void awaitNextRound(RateLimiter... ls) throws InterruptedException {
    int[] before = new int[ls.length];
    for (int i = 0; i < ls.length; i++) {
      before[i] = rounds.get(ls[i]).get();
    }
    ticker.advance(leased.lease().reportInterval());
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (int i = 0; i < ls.length; i++) {
      while (rounds.get(ls[i]).get() == before[i] && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
      assertThat(rounds.get(ls[i]).get()).as("a report round after the requests").isGreaterThan(before[i]);
    }
  }

  @AfterEach
  void close() {
    limiters.forEach(RateLimiter::close);
  }

  /** What the store has left for the key now: a peek (cost 0 is always decided by the store). */
  long storeRemaining(RateLimiter via, String key) {
    return via.acquire("api", key, 0).items().get(0).windows().get(0).remaining();
  }

  /** The most of the first {@code n} admission times (µs, ascending) in any one-second window. */
  static int mostInOneSecond(long[] times, int n) {
    int worst = 0;
    for (int i = 0, j = 0; j < n; j++) {
      while (times[j] - times[i] >= 1_000_000) {
        i++;
      }
      worst = Math.max(worst, j - i + 1);
    }
    return worst;
  }

  @Test
  void unitsAreTakenFromTheStoreAndAdmittedLocallyUntilTheyRunOut() throws InterruptedException {
    RateLimiter a = limiter();
    Decision first = a.acquire("api", "all");
    assertThat(first.allowed()).isTrue();
    // Before its first report is answered an instance does not know how many share the budget:
    // the store decided that one exactly, and nothing was taken.
    assertThat(storeRemaining(a, "all")).isEqualTo(999);
    awaitFirstRound(a);
    assertThat(a.acquire("api", "all").allowed()).isTrue();
    // The first take: 50 units (half the budget while alone) left the store's window at once.
    assertThat(storeRemaining(a, "all")).isEqualTo(949);
    for (int i = 0; i < 20; i++) {
      assertThat(a.acquire("api", "all").allowed()).isTrue();
    }
    // Renewed before running dry: still within the size, and the store counts every unit taken.
    long taken = 1000 - storeRemaining(a, "all");
    assertThat(taken).isBetween(22L, 22L + 50);
    // The decision explains itself from this instance's view, never above the limit.
    WindowState w = a.acquire("api", "all").items().get(0).windows().get(0);
    assertThat(w.limit()).isEqualTo(1000);
    assertThat(w.remaining()).isBetween(0L, 1000L);
  }

  @Test
  void theStoreNeverAdmitsPastItsLimitWhoeverHoldsTheUnits() {
    List<RateLimiter> three = List.of(limiter(), limiter(), limiter());
    int admitted = 0;
    for (int i = 0; i < 1500; i++) {
      if (three.get(i % 3).acquire("api", "all").allowed()) {
        admitted++;
      }
    }
    // The clock stands still: one window, so never more than its limit, leased or not.
    assertThat(admitted).isEqualTo(1000);
    assertThat(storeRemaining(three.get(0), "all")).isZero();
  }

  @Test
  void overAdmissionInAWindowStaysWithinTheBudget() {
    RateLimiter a = limiter();
    RateLimiter b = limiter();
    long[] times = new long[4000];
    int n = 0;
    long start = ticker.nowMicros();
    for (int i = 0; i < 4000; i++) {
      ticker.advance(Duration.ofNanos(500_000)); // 2,000 offered per second, twice the limit
      if ((i % 2 == 0 ? a : b).acquire("api", "all").allowed()) {
        times[n++] = ticker.nowMicros() - start;
      }
    }
    // Every sliding one-second window: at most the limit plus the budget (100 units).
    assertThat(mostInOneSecond(times, n)).isLessThanOrEqualTo(1000 + 100);
    assertThat(n).isGreaterThan(1900); // about the limit over two seconds is usable
  }

  @Test
  void aKeyWithALiveLimitIsLeasedUnderItsWindowsWithTheirBudget() throws InterruptedException {
    RateLimiter a = limiter(true);
    RateLimiter b = limiter(true);
    // 200 per second for this key: a budget of 20 units (10 %), not the rule's 100. Set through
    // both, so that each applies it now rather than at its next read of the store's policies.
    for (RateLimiter l : List.of(a, b)) {
      l.policies().setLimit("api", "vip", LiveLimit.windows(List.of(Window.perSeconds(200, 1))))
          .toCompletableFuture().join();
    }
    a.acquire("api", "vip");
    b.acquire("api", "vip");
    awaitFirstRound(a);
    awaitFirstRound(b);
    long[] times = new long[8000];
    int n = 0;
    int leased = 0;
    long start = ticker.nowMicros();
    for (int i = 0; i < 8000; i++) {
      ticker.advance(Duration.ofNanos(500_000)); // 2,000 offered per second, ten times the live limit
      Decision d = (i % 2 == 0 ? a : b).acquire("api", "vip");
      if (d.allowed()) {
        times[n++] = ticker.nowMicros() - start;
        assertThat(d.items().get(0).windows().get(0).limit()).isEqualTo(200);
        if (d.items().get(0).leased()) {
          leased++;
        }
      }
    }
    // Every sliding one-second window: at most the live limit plus its budget, not the rule's.
    assertThat(mostInOneSecond(times, n)).isLessThanOrEqualTo(200 + 20);
    assertThat(n).isGreaterThan(4 * 190); // about the live limit over four seconds is usable
    assertThat(leased).as("admitted from leases, not only by the store").isPositive();
    // The keepers report on the fake clock, from threads of their own that a loaded machine may not
    // have run during the loop: one more round each, so that the board holds reports made since.
    awaitNextRound(a, b);
    // The leader sized the key by the live limit's budget: the sizes in use fit in 20 units together.
    long sizes = 0;
    for (byte[] r : store.leaseBoard().orElseThrow().reports(1 << 20).toCompletableFuture().join().values()) {
      for (UsageReport.Entry e : UsageReport.decode(r, 512).entries()) {
        if (e.key().equals("vip")) {
          sizes += e.sizeInUse();
        }
      }
    }
    assertThat(sizes).isPositive().isLessThanOrEqualTo(20);
  }

  @Test
  void closingGivesTheUnitsHeldBack() throws InterruptedException {
    RateLimiter a = limiter();
    a.acquire("api", "all");
    awaitFirstRound(a);
    for (int i = 0; i < 4; i++) {
      a.acquire("api", "all");
    }
    RateLimiter other = limiter();
    assertThat(storeRemaining(other, "all")).isLessThan(995); // units held by a
    a.close();
    assertThat(storeRemaining(other, "all")).isEqualTo(995);
  }

  @Test
  void aRequestOfSeveralItemsIsAllOrNothingWithLeasedItemsInIt() throws InterruptedException {
    // One leased rule and one exact rule that admits once an hour, in one limiter.
    Rule strict = Rule.builder("strict").window(1, Duration.ofHours(1)).build();
    AtomicInteger done = new AtomicInteger();
    RateLimiter a = Sluice.builder().rules(leased, strict).store(new FlakyStore(store).withLeases().shared())
        .ticker(ticker).sleeper(ticker).listener(new DecisionListener() {
          @Override
          public void onLeasesHeld(int keys, long units) {
            done.incrementAndGet();
          }
        }).build();
    limiters.add(a);
    rounds.put(a, done);
    a.acquire("api", "all");
    awaitFirstRound(a);
    // Leased from now on: the instance's view of remaining drops by one per admission.
    Decision d1 = a.acquire("api", "all");
    assertThat(d1.items().get(0).leased()).isTrue();
    long r1 = d1.items().get(0).windows().get(0).remaining();
    Decision both = a.acquire(Request.of(Item.of("api", "all"), Item.of("strict", "k")));
    assertThat(both.allowed()).isTrue();
    assertThat(both.items().get(0).leased()).isTrue();
    // The exact rule denies now: the request is denied, and the unit its leased item took goes back.
    Decision denied = a.acquire(Request.of(Item.of("api", "all"), Item.of("strict", "k")));
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.items().get(0).leased()).isTrue();
    Decision d2 = a.acquire("api", "all");
    assertThat(d2.items().get(0).leased()).isTrue();
    // One for the request allowed, one for d2; none for the denied one.
    assertThat(d2.items().get(0).windows().get(0).remaining()).isEqualTo(r1 - 2);
  }
}
