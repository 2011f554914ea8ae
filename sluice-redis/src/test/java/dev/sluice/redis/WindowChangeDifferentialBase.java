package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Random requests on keys whose windows change at random between them (live limits), on
 * explicit times: the Redis store decides every one exactly as the memory store (which decides
 * as CarryOracle, see MemoryWindowChangeProperties), every number. Requests of one to three
 * items (on a Cluster, items on several shards: reservations and refunds), queued requests that
 * go as one batched call, and logs large enough to be read slot by slot.
 *
 * <p>On a Cluster, a request of several items decides them on each shard apart: a reservation,
 * refunded if another shard denies. A reservation under a key's new windows stores the state
 * carried to them, and its refund gives back the units, not the carry, where the memory store,
 * deciding the request as one, stores nothing (docs/algorithms.md). There, requests of several
 * items keep each key on the windows it was last admitted under, and single-item requests change
 * them.
 */
abstract class WindowChangeDifferentialBase {
  private static final long T0 = 1_700_000_000_000_000L;
  private static final String[] KEYS = {"a", "b", "c", "d", "e"};

  abstract String uri();

  abstract void flush();

  /**
   * Whether the server is a Cluster, where requests on several shards in flight at once are not
   * decided as one by one (each reserves on its shards and refunds if another denies).
   */
  boolean cluster() {
    return false;
  }

  /** Window sets that share some periods; the first is the rule's own. */
  private static List<List<Window>> sets(SplittableRandom rnd, long maxLimit) {
    long[] periods = {1_000, 2_000, 3_000, 10_000, 60_000};
    List<List<Window>> sets = new ArrayList<>();
    for (int s = 0; s < 4; s++) {
      List<Window> ws = new ArrayList<>();
      int n = 1 + rnd.nextInt(3);
      int from = rnd.nextInt(periods.length);
      for (int i = 0; i < n; i++) {
        long p = periods[(from + 2 * i) % periods.length];
        if (ws.stream().noneMatch(w -> w.periodMillis() == p)) {
          ws.add(Window.of(1 + rnd.nextLong(maxLimit), Duration.ofMillis(p)));
        }
      }
      sets.add(ws);
    }
    return sets;
  }

  private static final class Trace {
    final SplittableRandom rnd;
    final List<Rule> rules = new ArrayList<>();
    final List<List<List<Window>>> sets = new ArrayList<>();
    /** Per rule and key: the index of its windows in its rule's sets. */
    final int[][] current;
    /** Per rule and key: the index of the windows it was last admitted under. */
    final int[][] admitted;
    final boolean[][] seen;
    final boolean cluster;
    final long maxCost;
    long now = T0;

    Trace(long seed, List<Algorithm> algorithms, long maxLimit, boolean cluster) {
      this.cluster = cluster;
      rnd = new SplittableRandom(seed);
      for (Algorithm a : algorithms) {
        List<List<Window>> s = sets(rnd, maxLimit);
        sets.add(s);
        rules.add(Rule.builder("w" + a.configName() + seed).algorithm(a).windows(s.get(0))
            .precision(1 + rnd.nextInt(5)).build());
      }
      current = new int[rules.size()][KEYS.length];
      admitted = new int[rules.size()][KEYS.length];
      seen = new boolean[rules.size()][KEYS.length];
      maxCost = Math.max(2, maxLimit / 4);
    }

    Batch next(boolean advance) {
      if (advance) {
        now += rnd.nextLong(-20_000, 1_500_000);
      }
      int items = 1 + rnd.nextInt(3);
      boolean keep = cluster && items > 1;
      List<ResolvedItem> out = new ArrayList<>();
      List<String> seen = new ArrayList<>();
      for (int i = 0; i < items; i++) {
        int r = rnd.nextInt(rules.size());
        int k = rnd.nextInt(KEYS.length);
        if (seen.contains(r + "|" + k)) {
          continue;
        }
        seen.add(r + "|" + k);
        if (rnd.nextInt(5) == 0) {
          current[r][k] = rnd.nextInt(sets.get(r).size());
        }
        if (keep) {
          current[r][k] = admitted[r][k];
        }
        out.add(new ResolvedItem(rules.get(r), KEYS[k], rnd.nextLong(maxCost + 1),
            sets.get(r).get(current[r][k])));
      }
      return new Batch(out, now);
    }

    /** Records the windows of the items that {@code decided} admitted. */
    void decided(Batch b, List<ItemDecision> decided) {
      boolean all = decided.stream().allMatch(ItemDecision::allowed);
      for (int i = 0; i < decided.size(); i++) {
        ResolvedItem it = b.items().get(i);
        int r = rules.indexOf(it.rule());
        int k = List.of(KEYS).indexOf(it.key());
        // A key's first decision makes its state for its windows, whatever it decides.
        if (all && it.cost() > 0 || !seen[r][k]) {
          admitted[r][k] = sets.get(r).indexOf(it.windows());
        }
        seen[r][k] = true;
      }
    }
  }

  private void compare(long seed, List<Algorithm> algorithms, long maxLimit, int steps) {
    flush();
    Trace trace = new Trace(seed, algorithms, maxLimit, cluster());
    MemoryStore memory = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    try (RedisStore redis = RedisStore.builder(uri()).prefix("carry" + seed + ":").ttlSlack(Duration.ofMinutes(5))
        .build()) {
      for (int i = 0; i < steps; i++) {
        Batch b = trace.next(true);
        List<ItemDecision> expected = memory.decideSync(b);
        assertThat(redis.decideSync(b)).as("seed %d step %d at %d µs, items %s", seed, i, b.timeMicros() - T0,
            b.items()).isEqualTo(expected);
        trace.decided(b, expected);
      }
    }
  }

  @Test
  void everyAlgorithmCarriesItsStateAsTheMemoryStoreDoes() {
    for (long seed = 1; seed <= 4; seed++) {
      compare(seed, List.of(Algorithm.values()), 8, 400);
    }
  }

  @Test
  void largeLogsReadSlotBySlotCarryTheirUnitsAsTheMemoryStoreDoes() {
    for (long seed = 11; seed <= 12; seed++) {
      compare(seed, List.of(Algorithm.SLIDING_LOG), 400, 300);
    }
  }

  @Test
  void queuedRequestsOfChangingWindowsGoTogetherAndDecideAsOneByOne() throws Exception {
    Assumptions.assumeFalse(cluster(), "requests on several shards in flight at once are not serialized");
    flush();
    Trace trace = new Trace(21, List.of(Algorithm.values()), 8, false);
    MemoryStore memory = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    try (RedisStore redis = RedisStore.builder(uri()).prefix("carryq:").ttlSlack(Duration.ofMinutes(5))
        .callsInFlight(1).build()) {
      for (int group = 0; group < 80; group++) {
        List<Batch> batches = new ArrayList<>();
        int size = 1 + trace.rnd.nextInt(16);
        for (int i = 0; i < size; i++) {
          batches.add(trace.next(i == 0));
        }
        List<CompletableFuture<List<ItemDecision>>> actual = new ArrayList<>();
        for (Batch b : batches) {
          actual.add(redis.decide(b).toCompletableFuture());
        }
        for (int i = 0; i < size; i++) {
          Batch b = batches.get(i);
          assertThat(actual.get(i).get(10, TimeUnit.SECONDS)).as("group %d request %d, items %s", group, i, b.items())
              .isEqualTo(memory.decideSync(b));
        }
      }
    }
  }
}
