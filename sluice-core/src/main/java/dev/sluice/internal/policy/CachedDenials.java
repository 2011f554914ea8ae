package dev.sluice.internal.policy;

import dev.sluice.DecisionListener;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.spi.ResolvedItem;

/**
 * The local step of a remote store's recent denials ({@link DenialCache}): an item the store
 * denied moments before, and that could not fit yet, is denied again without a round trip; every
 * denial the store answers is offered to the cache. Listeners hear of each denial answered here
 * ({@link DecisionListener#onCachedDenial}).
 */
public final class CachedDenials implements LocalStep {
  private final DenialCache denials;
  private final DecisionListener[] listeners;

  public CachedDenials(DenialCache denials, DecisionListener[] listeners) {
    this.denials = denials;
    this.listeners = listeners;
  }

  @Override
  public boolean acts(Rule rule) {
    return !denials.isEmpty();
  }

  @Override
  public ItemDecision before(LocalItem item) {
    if (item.startMicros() == LocalItem.NO_START) {
      return null;
    }
    ItemDecision here = denials.check(item.rule(), item.key(), item.cost(), item.windows(), item.startMicros(),
        item.requestRules());
    if (here != null) {
      for (DecisionListener l : listeners) {
        try {
          l.onCachedDenial(item.rule().name(), item.key());
        } catch (RuntimeException ignored) {
          // A listener must not change a decision.
        }
      }
    }
    return here;
  }

  @Override
  public boolean learns() {
    return true;
  }

  @Override
  public boolean timed() {
    return true;
  }

  @Override
  public void after(ResolvedItem sent, ItemDecision decided, long startMicros) {
    if (startMicros != LocalItem.NO_START) {
      denials.learn(sent.rule(), sent.key(), sent.cost(), sent.windows(), decided, startMicros);
    }
  }
}
