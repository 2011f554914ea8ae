package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.spi.Grants;
import dev.sluice.spi.ResolvedItem;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Leased mode's takes and give-backs on Redis: a take is one call of mode {@code l} of the decision
 * script (the fit, then mode {@code r}'s reservation at that cost), a give-back one call of mode
 * {@code u}, the refund, with the item's cost set to the units given back. An item's state is one
 * key, so on a Cluster either is one script on the shard of the key's slot. The undo record is the
 * one the script answered, sent back as it came.
 */
final class RedisGrants implements Grants {
  private static final byte[] TAKE = {'l'};
  private static final byte[] REFUND = {'u'};
  private static final byte[] STORE_CLOCK = {};

  private final RedisStore store;

  RedisGrants(RedisStore store) {
    this.store = store;
  }

  @Override
  public CompletionStage<Grant> take(ResolvedItem item, long units) {
    return take(item, units, STORE_CLOCK);
  }

  /** {@link #take} at an explicit time, {@code atMicros} since the epoch (replay and tests), as decisions take one. */
  CompletionStage<Grant> takeAt(ResolvedItem item, long units, long atMicros) {
    byte[] time;
    try {
      time = RedisStore.explicitTime(atMicros);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return take(item, units, time);
  }

  private CompletionStage<Grant> take(ResolvedItem item, long units, byte[] time) {
    byte[][] keys;
    byte[][] args;
    try {
      Grants.checkTake(item, units);
      byte[][] itemArgs = store.argsOf(TAKE, time, withCost(item, 0), null);
      args = new byte[][] {itemArgs[0], itemArgs[1], ItemShape.num(units)};
      keys = new byte[][] {store.keyOf(item)};
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return DecisionScript.<List<?>>run(store.link(), ScriptOutputType.MULTI, keys, args).handle((reply, err) -> {
      if (err != null) {
        throw StoreErrors.failure(err);
      }
      try {
        long granted = (Long) reply.get(0);
        byte[] report = (byte[]) reply.get(1);
        List<?> undo = (List<?>) reply.get(2);
        long at = (Long) reply.get(3);
        store.decided(Replies.time(report), time);
        ItemDecision d = Replies.decode(report, List.of(withCost(item, Math.max(1, granted)))).get(0);
        return new Grant(granted, at, d, granted == 0 ? null : List.copyOf(undo));
      } catch (RuntimeException e) {
        throw StoreErrors.failure(new MalformedReplyException("take reply " + reply + ": " + e));
      }
    });
  }

  @Override
  public CompletionStage<Void> giveBack(ResolvedItem item, Grant grant, long units) {
    if (grant.undo() == null) {
      return checked(item, grant, units);
    }
    byte[][] keys;
    byte[][] args;
    try {
      Grants.checkGiveBack(item, grant, units);
      keys = DecisionScript.refundKeys(new byte[][] {store.keyOf(item)});
      args = store.argsOf(REFUND, STORE_CLOCK, withCost(item, units), (List<?>) grant.undo());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return DecisionScript.<List<?>>run(store.link(), ScriptOutputType.MULTI, keys, args).handle((reply, err) -> {
      if (err != null) {
        throw StoreErrors.failure(err);
      }
      return null;
    });
  }

  private static CompletionStage<Void> checked(ResolvedItem item, Grant grant, long units) {
    try {
      Grants.checkGiveBack(item, grant, units);
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static ResolvedItem withCost(ResolvedItem item, long cost) {
    return new ResolvedItem(item.rule(), item.key(), cost, item.windows(), item.audit());
  }
}
