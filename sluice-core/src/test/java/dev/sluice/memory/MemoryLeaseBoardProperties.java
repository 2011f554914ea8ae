package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.spi.LeaseBoard;
import dev.sluice.spi.LeaseBoard.Leader;
import dev.sluice.testing.FakeTicker;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Several threads, each several instances, campaigning, resigning and publishing at random (with
 * tokens of their own, stale ones and others') while a fake clock moves on: never two leaders with
 * running terms, never a publish accepted from an instance that did not lead with that token.
 */
class MemoryLeaseBoardProperties {
  /** An accepted publish: who, with which token, the clock before and after the call. */
  record Accepted(String instance, long token, long beforeMillis, long afterMillis) {}

  @Property(tries = 30)
  void neverTwoLeadersNorAPublishFromANonLeader(@ForAll long seed, @ForAll @IntRange(min = 2, max = 4) int threads,
      @ForAll @IntRange(min = 1, max = 4) int instancesPerThread) throws InterruptedException {
    FakeTicker ticker = new FakeTicker(5_000_000_000L);
    LeaseBoard board = MemoryStore.builder().ticker(ticker).build().leaseBoard().orElseThrow();
    ConcurrentLinkedQueue<Leader> campaigns = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Accepted> accepted = new ConcurrentLinkedQueue<>();
    Map<Long, Boolean> tokensSeen = new ConcurrentHashMap<>();
    // A resignation ends a term early: per (instance, token), the clock before its earliest resign call.
    Map<String, Long> resigned = new ConcurrentHashMap<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Random r = new Random(seed + t);
      int thread = t;
      all.add(new Thread(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          return;
        }
        Map<String, Long> believed = new TreeMap<>();
        for (int step = 0; step < 400; step++) {
          String id = "t" + thread + "i" + r.nextInt(instancesPerThread);
          switch (r.nextInt(6)) {
            case 0, 1 -> {
              // A term of its own per instance: a renewal with a shorter one would move the end
              // back, and the latest end seen would no longer be the term's end.
              Leader l = board.campaign(id, 1 + Math.floorMod(id.hashCode(), 40)).toCompletableFuture().join();
              campaigns.add(l);
              tokensSeen.put(l.token(), true);
              if (id.equals(l.instance())) {
                believed.put(id, l.token());
              }
            }
            case 2, 3 -> {
              // Its own belief (maybe stale), or any token ever seen: a forger.
              long token = r.nextBoolean() && believed.containsKey(id) ? believed.get(id)
                  : tokensSeen.keySet().stream().skip(r.nextInt(Math.max(1, tokensSeen.size()))).findFirst().orElse(1L);
              long before = ticker.nowMicros() / 1000;
              boolean ok = board.publish(id, token, Map.of("x", ByteBuffer.allocate(8).putLong(token).array()), 100)
                  .toCompletableFuture().join();
              long after = ticker.nowMicros() / 1000;
              if (ok) {
                accepted.add(new Accepted(id, token, before, after));
              }
            }
            case 4 -> {
              if (believed.containsKey(id) && r.nextInt(4) == 0) {
                long token = believed.remove(id);
                resigned.merge(id + "/" + token, ticker.nowMicros() / 1000, Math::min);
                board.resign(id, token).toCompletableFuture().join();
              }
            }
            default -> ticker.advanceMicros(r.nextInt(15_000));
          }
        }
      }));
    }
    all.forEach(Thread::start);
    start.countDown();
    for (Thread th : all) {
      th.join();
    }
    // Per token: who won it, when it first appeared, the latest end of its term seen.
    Map<Long, String> holder = new TreeMap<>();
    Map<Long, Long> first = new TreeMap<>();
    Map<Long, Long> lastUntil = new TreeMap<>();
    for (Leader l : campaigns) {
      assertThat(l.instance()).as("a campaign always answers a leader").isNotNull();
      String before = holder.putIfAbsent(l.token(), l.instance());
      assertThat(before == null || before.equals(l.instance())).as("token %d held by one instance", l.token()).isTrue();
      first.merge(l.token(), l.nowMillis(), Math::min);
      lastUntil.merge(l.token(), l.untilMillis(), Math::max);
    }
    Long previous = null;
    for (long token : holder.keySet()) {
      if (previous != null) {
        long ended = Math.min(lastUntil.get(previous),
            resigned.getOrDefault(holder.get(previous) + "/" + previous, Long.MAX_VALUE));
        assertThat(first.get(token)).as("token %d began before token %d's term ended", token, previous)
            .isGreaterThanOrEqualTo(ended);
      }
      previous = token;
    }
    for (Accepted a : accepted) {
      assertThat(holder.get(a.token())).as("publish accepted with token %d", a.token()).isEqualTo(a.instance());
      assertThat(a.beforeMillis()).as("accepted before its term ended").isLessThan(lastUntil.get(a.token()));
    }
    assertThat(campaigns).isNotEmpty();
  }
}
