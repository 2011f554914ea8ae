package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.spi.ResolvedItem;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Cluster request whose items live in more than one hash slot. A script can only touch keys
 * of one slot, so there is no single transaction: each slot's items are decided and committed
 * as a reservation on their shard ({@code r} mode), all shards at once. If every enforced item
 * fits everywhere, the reservations stand. Otherwise every reservation is refunded ({@code u}
 * mode) and the decisions reported are those without consumption. Between reserve and refund a
 * concurrent request may see a reservation and be denied (a false deny); no interleaving lets
 * more through than the limits allow, because a reservation is counted before anyone can rely
 * on it and a refund never gives back more than was reserved.
 *
 * <p>It knows nothing of the store that starts it: the store hands it the connection, the
 * script arguments of its items and where to report the time each shard decided at.
 */
final class ShardedDecision {
  private static final Logger log = LoggerFactory.getLogger(ShardedDecision.class);
  private static final byte[] RESERVE = {'r'};
  private static final byte[] REFUND = {'u'};

  /** The script arguments of some of the request's items. */
  @FunctionalInterface
  interface Arguments {
    /**
     * The arguments for the items at {@code which}, in {@code mode} at {@code time} (empty: the
     * server's clock); with {@code undo}, each item's undo record follows it.
     */
    byte[][] of(byte[] mode, byte[] time, int[] which, List<List<?>> undo);
  }

  private final Link link;
  private final List<ResolvedItem> items;
  private final byte[][] keys;
  private final byte[] time;
  private final Arguments args;
  private final LongConsumer decidedAt;
  /** The keys of a reservation of the items at {@code which}: their state keys, then any sibling keys. */
  private final java.util.function.Function<int[], byte[][]> reserveKeys;

  /**
   * @param time the explicit time of the request's digits, or empty for the server's clock
   * @param decidedAt told the time (µs) each shard decided at
   */
  ShardedDecision(Link link, List<ResolvedItem> items, byte[][] keys, byte[] time, Arguments args,
      LongConsumer decidedAt) {
    this(link, items, keys, time, args, decidedAt, null);
  }

  /** @param reserveKeys the keys of a reservation, when items have sibling keys (bans, audit); null: their state keys */
  ShardedDecision(Link link, List<ResolvedItem> items, byte[][] keys, byte[] time, Arguments args,
      LongConsumer decidedAt, java.util.function.Function<int[], byte[][]> reserveKeys) {
    this.link = link;
    this.items = items;
    this.keys = keys;
    this.time = time;
    this.args = args;
    this.decidedAt = decidedAt;
    this.reserveKeys = reserveKeys != null ? reserveKeys : this::keysOf;
  }

  /** One slot's items and, once decided, the script's reply. */
  private static final class Group {
    final int[] which;
    List<?> reply;
    Throwable error;

    Group(int[] which) {
      this.which = which;
    }

    byte[] after() {
      return (byte[]) reply.get(0);
    }

    byte[] before() {
      return (byte[]) reply.get(1);
    }

    List<?> undo(int n) {
      return (List<?>) reply.get(2 + n);
    }
  }

  CompletableFuture<List<ItemDecision>> run() {
    Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
    for (int i = 0; i < keys.length; i++) {
      bySlot.computeIfAbsent(Link.slot(keys[i]), s -> new ArrayList<>()).add(i);
    }
    List<Group> groups = new ArrayList<>();
    CompletableFuture<?>[] calls = new CompletableFuture<?>[bySlot.size()];
    for (List<Integer> idx : bySlot.values()) {
      Group g = new Group(idx.stream().mapToInt(Integer::intValue).toArray());
      calls[groups.size()] = DecisionScript.<List<?>>run(link, ScriptOutputType.MULTI, reserveKeys.apply(g.which),
              args.of(RESERVE, time, g.which, null))
          .handle((reply, err) -> {
            g.reply = reply;
            g.error = err;
            return null;
          });
      groups.add(g);
    }
    return CompletableFuture.allOf(calls).thenCompose(v -> settle(groups));
  }

  private CompletableFuture<List<ItemDecision>> settle(List<Group> groups) {
    Throwable error = null;
    boolean enforcedFit = true;
    ItemDecision[] b = new ItemDecision[items.size()];
    ItemDecision[] a = new ItemDecision[items.size()];
    for (Group g : groups) {
      if (g.error != null) {
        error = error == null ? g.error : error;
        continue;
      }
      decidedAt.accept(Replies.time(g.after()));
      List<ResolvedItem> sub = subList(g.which);
      List<ItemDecision> ga = Replies.decode(g.after(), sub);
      List<ItemDecision> gb = Replies.decode(g.before(), sub);
      for (int n = 0; n < g.which.length; n++) {
        a[g.which[n]] = ga.get(n);
        b[g.which[n]] = gb.get(n);
        if (!ga.get(n).allowed() && !ga.get(n).shadow()) {
          enforcedFit = false;
        }
      }
    }
    if (error == null && enforcedFit) {
      return CompletableFuture.completedFuture(List.of(a));
    }
    CompletableFuture<Void> refunds = refund(groups);
    if (error != null) {
      Throwable failure = error;
      return refunds.thenCompose(v -> CompletableFuture.failedFuture(failure));
    }
    return refunds.handle((v, e) -> List.of(b));
  }

  /** Refunds every committed item of every group that answered; failures are logged (the reservation then stays: a false deny until it expires, never an over-admission). */
  private CompletableFuture<Void> refund(List<Group> groups) {
    List<CompletableFuture<?>> calls = new ArrayList<>();
    for (Group g : groups) {
      if (g.error != null) {
        continue;
      }
      List<Integer> idx = new ArrayList<>();
      List<List<?>> undo = new ArrayList<>();
      for (int n = 0; n < g.which.length; n++) {
        if (!g.undo(n).isEmpty()) {
          idx.add(g.which[n]);
          undo.add(g.undo(n));
        }
      }
      if (idx.isEmpty()) {
        continue;
      }
      int[] which = idx.stream().mapToInt(Integer::intValue).toArray();
      calls.add(DecisionScript.<List<?>>run(link, ScriptOutputType.MULTI,
              DecisionScript.refundKeys(keysOf(which)), args.of(REFUND, new byte[0], which, undo))
          .whenComplete((r, e) -> {
            if (e != null) {
              log.warn("refund of a cross-shard reservation failed; it stays until its TTL: {}", e.toString());
            }
          }));
    }
    return CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0]))
        .handle((v, e) -> null);
  }

  private byte[][] keysOf(int[] which) {
    byte[][] k = new byte[which.length][];
    for (int n = 0; n < which.length; n++) {
      k[n] = keys[which[n]];
    }
    return k;
  }

  private List<ResolvedItem> subList(int[] which) {
    List<ResolvedItem> out = new ArrayList<>(which.length);
    for (int i : which) {
      out.add(items.get(i));
    }
    return out;
  }
}
