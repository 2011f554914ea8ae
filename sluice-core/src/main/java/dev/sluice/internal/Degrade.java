package dev.sluice.internal;

import dev.sluice.DecisionListener;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.ItemDecision;
import dev.sluice.StoreException;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.internal.policy.Fleet;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The stage that decides when the store failed: an error of the request itself ({@link #isOutage})
 * is thrown as it is, after listeners heard of it: no decision is made. On an outage each item
 * follows its rule's failure mode: closed items deny, open items allow, local items are decided
 * together on the in-process fallback with a share of their limits. The decision is marked
 * degraded.
 *
 * <p>A request with an enforced closed item is denied whatever the others say, so its local
 * items are only looked at (cost 0), never consumed: a denial consumes nothing, degraded or not.
 */
final class Degrade {
  private final Store local;
  /** The share of each limit {@code failure_mode: local} holds; NaN: 1 / the instances counted. */
  private final double localShare;
  /** The instances sharing a remote store, null when not counted. */
  private final Fleet fleet;
  private final DecisionListener[] listeners;
  private final long timeoutMillis;

  Degrade(Store local, double localShare, Fleet fleet, DecisionListener[] listeners, long timeoutMillis) {
    this.local = local;
    this.localShare = localShare;
    this.fleet = fleet;
    this.listeners = listeners;
    this.timeoutMillis = timeoutMillis;
  }

  /** The decisions of the items sent, in order, after the store failed with {@code error}. */
  List<ItemDecision> decide(Resolved r, Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof TimeoutException && cause.getMessage() == null) {
      cause = new TimeoutException("the store did not answer within " + timeoutMillis + " ms");
    }
    for (DecisionListener l : listeners) {
      try {
        l.onStoreError(r.request(), cause);
      } catch (RuntimeException ignored) {
        // A listener must not change a decision.
      }
    }
    if (!isOutage(cause)) {
      throw (RuntimeException) cause;
    }
    List<ResolvedItem> items = r.batch().items();
    boolean closedDenies = false;
    for (ResolvedItem it : items) {
      closedDenies |= it.rule().failureMode() == FailureMode.CLOSED && !it.rule().shadow();
    }
    List<ResolvedItem> locals = new ArrayList<>();
    for (ResolvedItem it : items) {
      if (it.rule().failureMode() == FailureMode.LOCAL) {
        locals.add(new ResolvedItem(it.rule(), it.key(), closedDenies ? 0 : it.cost(), share(it.windows())));
      }
    }
    List<ItemDecision> localDecisions = locals.isEmpty()
        ? List.of()
        : local.decideSync(new Batch(locals, r.batch().timeMicros()));
    List<ItemDecision> out = new ArrayList<>(items.size());
    int li = 0;
    for (ResolvedItem it : items) {
      switch (it.rule().failureMode()) {
        case LOCAL -> {
          ItemDecision d = localDecisions.get(li++);
          out.add(d.cost() == it.cost() ? d : new ItemDecision(d.rule(), d.key(), it.cost(), d.allowed(), d.reason(),
              d.waitMs(), d.windows(), d.shadow()));
        }
        case OPEN -> out.add(new ItemDecision(it.rule().name(), it.key(), it.cost(), true, DenyReason.NONE, 0,
            List.of(), it.rule().shadow()));
        case CLOSED -> out.add(new ItemDecision(it.rule().name(), it.key(), it.cost(), false,
            DenyReason.STORE_UNAVAILABLE, 0, unknownWindows(it.windows()), it.rule().shadow()));
      }
    }
    return out;
  }

  /**
   * Whether a store failure is an outage, which failure modes decide. A {@link StoreException} or
   * an {@link IllegalArgumentException} is the request's own: the store could not decide it and
   * would not the next time either, so admitting it (an {@code open} rule) would hide a broken
   * rule or key for good.
   */
  static boolean isOutage(Throwable cause) {
    return !(cause instanceof StoreException || cause instanceof IllegalArgumentException);
  }

  private static List<WindowState> unknownWindows(List<Window> ws) {
    List<WindowState> out = new ArrayList<>(ws.size());
    for (Window w : ws) {
      out.add(new WindowState(w.limit(), w.periodMillis(), 0, 0, 0, true));
    }
    return out;
  }

  private List<Window> share(List<Window> ws) {
    double share = localShare();
    if (share >= 1.0) {
      return ws;
    }
    List<Window> out = new ArrayList<>(ws.size());
    for (Window w : ws) {
      out.add(new Window(Math.max(1, (long) Math.floor(w.limit() * share)), w.period()));
    }
    return out;
  }

  /**
   * The share of each limit that {@code failure_mode: local} holds now: the one given, else 1 /
   * the instances last counted in the store (1 when the store counts none).
   */
  double localShare() {
    if (!Double.isNaN(localShare)) {
      return localShare;
    }
    return fleet == null ? 1.0 : 1.0 / fleet.live();
  }

  /** Stops being counted among the instances, waiting at most the store timeout. */
  void leave() {
    if (fleet != null) {
      fleet.leave(timeoutMillis);
    }
  }
}
