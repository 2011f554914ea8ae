package dev.sluice.internal.lease;

import dev.sluice.DecisionListener;
import java.util.function.Consumer;

/** Leased mode's events to the limiter's listeners: one that throws does not stop the others. */
final class LeaseEvents {
  private static final System.Logger LOG = System.getLogger(LeaseEvents.class.getName());
  private final DecisionListener[] listeners;

  LeaseEvents(DecisionListener[] listeners) {
    this.listeners = listeners.clone();
  }

  void emit(Consumer<DecisionListener> event) {
    for (DecisionListener l : listeners) {
      try {
        event.accept(l);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "a listener failed on a lease event: " + e);
      }
    }
  }
}
