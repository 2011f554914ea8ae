package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.spi.BanCounts;
import dev.sluice.spi.ResolvedItem;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The denials toward bans of a Cluster request decided across shards. Each shard's reservation
 * sees only its own items, while whether an item counts depends on them all (a ban in force on
 * one shard, a limit exceeded on another: {@link BanCounts}), so the reservations count nothing
 * and the items that count are counted here, one call (mode {@code c}) per shard that holds any.
 */
final class ShardedBanCounts {
  private static final Logger log = LoggerFactory.getLogger(ShardedBanCounts.class);

  private ShardedBanCounts() {}

  /**
   * Counts, then answers {@code decided}. A failed count is logged and the decision stands: a
   * denial not counted delays a ban, it never admits anything.
   *
   * @param args the script arguments (mode {@code c}, the request's time) of the items at an index set
   */
  static CompletableFuture<List<ItemDecision>> count(Link link, List<ResolvedItem> items, byte[][] keys,
      List<ItemDecision> decided, Function<int[], byte[][]> args) {
    boolean[] counted = BanCounts.of(items, decided);
    if (counted == null) {
      return CompletableFuture.completedFuture(decided);
    }
    Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
    for (int i = 0; i < counted.length; i++) {
      if (counted[i]) {
        bySlot.computeIfAbsent(Link.slot(keys[i]), s -> new ArrayList<>()).add(i);
      }
    }
    List<CompletableFuture<?>> calls = new ArrayList<>();
    for (List<Integer> idx : bySlot.values()) {
      int[] which = idx.stream().mapToInt(Integer::intValue).toArray();
      byte[][] banKeys = new byte[which.length][];
      for (int n = 0; n < which.length; n++) {
        banKeys[n] = StateSiblings.banKey(keys[which[n]]);
      }
      calls.add(DecisionScript.<List<?>>run(link, ScriptOutputType.MULTI, banKeys, args.apply(which))
          .whenComplete((r, e) -> {
            if (e != null) {
              log.warn("counting denials toward bans after a cross-shard request failed: {}", e.toString());
            }
          }));
    }
    return CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0])).handle((v, e) -> decided);
  }
}
