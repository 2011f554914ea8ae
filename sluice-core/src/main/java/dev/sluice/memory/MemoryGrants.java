package dev.sluice.memory;

import dev.sluice.ItemDecision;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Eval;
import dev.sluice.algorithm.KeyState;
import dev.sluice.spi.Grants;
import dev.sluice.spi.ResolvedItem;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Leased mode's takes and give-backs on the memory store: a take is one item decided under its
 * key's lock as {@link Decisions} decides one (view, clamp, evaluate, room, commit), at the cost
 * that fits ({@link KeyState#fit}); a give-back is the algorithm's {@link KeyState#refund} under
 * the same lock.
 */
final class MemoryGrants implements Grants {
  private final Ticker ticker;
  private final KeyMap keys;
  private final Decisions decisions;

  MemoryGrants(Ticker ticker, KeyMap keys, Decisions decisions) {
    this.ticker = ticker;
    this.keys = keys;
    this.decisions = decisions;
  }

  @Override
  public CompletionStage<Grant> take(ResolvedItem item, long units) {
    try {
      Grants.checkTake(item, units);
      return CompletableFuture.completedFuture(takeNow(item, units));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private Grant takeNow(ResolvedItem item, long units) {
    long requested = ticker.nowMicros();
    while (true) {
      KeyState s = keys.state(item.rule(), item.key(), item.windows(), requested);
      if (s == null) {
        ResolvedItem one = withCost(item, 1);
        return new Grant(0, requested, decisions.full(one, requested), null);
      }
      s.lock();
      try {
        if (s.dead) {
          continue; // evicted between lookup and lock: look it up again
        }
        KeyState v = Decisions.view(item.rule(), s, item.windows());
        boolean first = v.lastSeen == Long.MIN_VALUE;
        long now = v.clamp(requested);
        long g = v.fit(now, units);
        Eval e = v.evaluate(now, Math.max(1, g));
        Object undo = null;
        KeyState held = s;
        if (g > 0 && keys.room(s, v, now, g, e)) {
          undo = v.undoFor(now, g);
          v.commit(now, g, e);
          held = v;
        } else {
          g = 0;
        }
        if (first) {
          keys.firstDecided(held, now);
        }
        ItemDecision d = v.decision(withCost(item, Math.max(1, g)), now, e);
        keys.publish(item.rule(), item.key(), s, held);
        return new Grant(g, now, d, undo);
      } finally {
        s.unlock();
      }
    }
  }

  @Override
  public CompletionStage<Void> giveBack(ResolvedItem item, Grant grant, long units) {
    try {
      Grants.checkGiveBack(item, grant, units);
      if (grant.undo() != null) {
        refund(item, units, grant.undo());
      }
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void refund(ResolvedItem item, long units, Object undo) {
    while (true) {
      KeyState s = keys.held(item.rule().name(), item.key());
      if (s == null) {
        return; // forgotten: its units were counted by no window any more
      }
      s.lock();
      try {
        if (s.dead) {
          continue;
        }
        // A state of other windows (changed since the take) does not hold the grant as taken.
        if (s.lastSeen != Long.MIN_VALUE && s.countsBy(item.windows())) {
          s.refund(units, undo);
        }
        return;
      } finally {
        s.unlock();
      }
    }
  }

  private static ResolvedItem withCost(ResolvedItem item, long cost) {
    return new ResolvedItem(item.rule(), item.key(), cost, item.windows(), item.audit());
  }
}
