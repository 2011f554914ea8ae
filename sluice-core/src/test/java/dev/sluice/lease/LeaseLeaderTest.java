package dev.sluice.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DecisionListener;
import dev.sluice.LeasePolicy;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Leased mode's leader through limiters as users build them, several on one memory store: one is
 * elected through the store, sizes follow each instance's demand, and when the leader is cut off
 * another takes over within two lease lengths.
 *
 * <p>The limiters' keepers run on their own threads; the test moves the fake clock one report
 * interval at a time and waits until every live limiter has finished its round for it.
 */
class LeaseLeaderTest {
  final FakeTicker ticker = new FakeTicker();
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();
  /** 10,000 per second, 1 % slack: a budget of 100 units. */
  final Rule leased = Rule.builder("api").window(10_000, Duration.ofSeconds(1))
      .lease(new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0.01)).build();
  final List<Instance> instances = new ArrayList<>();

  /** One limiter and what its listener saw. */
  final class Instance implements DecisionListener {
    final FlakyStore link = new FlakyStore(store).withLeases().shared();
    final RateLimiter limiter = Sluice.builder().rules(leased).store(link).ticker(ticker).sleeper(ticker).listener(this)
        .build();
    final AtomicInteger rounds = new AtomicInteger();
    final AtomicLong held = new AtomicLong();
    final AtomicLong taken = new AtomicLong();
    volatile boolean leads;
    final AtomicInteger terms = new AtomicInteger();
    final AtomicInteger rebalances = new AtomicInteger();
    volatile boolean live = true;

    @Override
    public void onLeasesHeld(int keys, long units) {
      held.set(units);
      rounds.incrementAndGet();
    }

    @Override
    public void onLeaseTake(String rule, long units) {
      taken.addAndGet(units);
    }

    @Override
    public void onLeadership(boolean leads) {
      this.leads = leads;
      if (leads) {
        terms.incrementAndGet();
      }
    }

    @Override
    public void onLeaseRebalance(int keys) {
      rebalances.incrementAndGet();
    }

    /** Cut off from the store, as a crashed or partitioned process is: it makes no call any more. */
    void cutOff() {
      live = false;
      link.mode(FlakyStore.Mode.FAILS);
    }
  }

  Instance instance() {
    Instance i = new Instance();
    instances.add(i);
    return i;
  }

  @AfterEach
  void close() {
    instances.forEach(i -> i.limiter.close());
  }

  /**
   * One report interval: each live instance makes its share of requests, spread over ten 10 ms
   * steps, and every live instance's round within it is awaited.
   */
  void interval(int... perStep) throws InterruptedException {
    // Counted from the start: a keeper may make its round while the clock moves within the interval.
    List<Integer> before = new ArrayList<>();
    for (Instance in : instances) {
      before.add(in.rounds.get());
    }
    for (int s = 0; s < 10; s++) {
      ticker.advance(Duration.ofMillis(10));
      for (int i = 0; i < perStep.length; i++) {
        Instance in = instances.get(i);
        for (int r = 0; r < perStep[i] && in.live; r++) {
          assertThat(in.limiter.acquire("api", "all").allowed()).isTrue();
        }
      }
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (int i = 0; i < instances.size(); i++) {
      Instance in = instances.get(i);
      while (in.live && in.rounds.get() == before.get(i) && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
    }
  }

  long leaders() {
    return instances.stream().filter(i -> i.leads).count();
  }

  @Test
  void oneLeaderIsElectedAndSizesFollowDemand() throws InterruptedException {
    Instance hot = instance();
    Instance cold1 = instance();
    Instance cold2 = instance();
    // 80 % of the demand on one instance: 800, 100 and 100 a second, a tenth of the limit.
    for (int n = 0; n < 25; n++) {
      interval(8, 1, 1);
      assertThat(leaders()).isLessThanOrEqualTo(1);
    }
    assertThat(leaders()).isEqualTo(1);
    assertThat(instances.stream().mapToInt(i -> i.terms.get()).sum()).isEqualTo(1);
    Instance leader = instances.stream().filter(i -> i.leads).findFirst().orElseThrow();
    assertThat(leader.rebalances.get()).isGreaterThan(10);
    // Past the learning period (a lease length), sizes in proportion to demand with floors of one:
    // about 1 + 97 × 0.8 for the hot one, 1 + 97 × 0.1 for each cold one; an even share would be
    // 100 ÷ 4 = 25 each. After a renewal an instance holds between half its size and its size.
    for (int n = 0; n < 5; n++) {
      interval(8, 1, 1);
      assertThat(hot.held.get() + cold1.held.get() + cold2.held.get()).isLessThanOrEqualTo(100);
    }
    assertThat(hot.held.get()).isGreaterThan(30);
    assertThat(cold1.held.get()).isLessThanOrEqualTo(11);
    assertThat(cold2.held.get()).isLessThanOrEqualTo(11);
  }

  @Test
  void aLeaderCutOffIsReplacedWithinTwoLeaseLengths() throws InterruptedException {
    instance();
    instance();
    instance();
    for (int n = 0; n < 5; n++) {
      interval(2, 2, 2);
    }
    assertThat(leaders()).isEqualTo(1);
    Instance old = instances.stream().filter(i -> i.leads).findFirst().orElseThrow();
    old.cutOff();
    int[] demand = new int[3];
    for (int i = 0; i < 3; i++) {
      demand[i] = instances.get(i) == old ? 0 : 2;
    }
    int intervals = 0;
    while (instances.stream().noneMatch(i -> i != old && i.leads) && intervals < 40) {
      interval(demand);
      intervals++;
    }
    // The old term runs out a lease length (10 intervals) after its last renewal; the next round
    // of any instance elects another: within two lease lengths.
    assertThat(intervals).isLessThanOrEqualTo(20);
    assertThat(old.leads).isFalse(); // its own campaign failed: it stepped down, not believing it leads
    assertThat(instances.stream().filter(i -> i.leads).count()).isEqualTo(1);
  }

  @Test
  void aNewcomerIsDecidedExactlyUntilTheLeaderSizesIt() throws InterruptedException {
    instance();
    instance();
    for (int n = 0; n < 15; n++) {
      interval(5, 5); // past the first leader's learning period
    }
    assertThat(leaders()).isEqualTo(1);
    Instance c = instance();
    // Its first requests come before its first report: no size, no take, the store decides them.
    for (int s = 0; s < 5; s++) {
      assertThat(c.limiter.acquire("api", "all").allowed()).isTrue();
    }
    assertThat(c.taken.get()).isZero();
    // Its first report finds a leader that has not sized it: still none.
    interval(5, 5, 5);
    assertThat(c.taken.get()).isZero();
    // The leader sizes it from its reports (a first report measures no interval: demand from the
    // second), once the others have adopted their shrunk sizes and freed the units; it adopts its
    // size at its next report and takes at its next request.
    int intervals = 0;
    while (c.taken.get() == 0 && intervals < 20) {
      interval(5, 5, 5);
      intervals++;
    }
    assertThat(c.taken.get()).isPositive();
    assertThat(intervals).isLessThanOrEqualTo(8);
    assertThat(leaders()).isEqualTo(1);
  }
}
