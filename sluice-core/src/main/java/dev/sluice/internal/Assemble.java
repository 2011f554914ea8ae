package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.DenyReason;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.internal.policy.DenialRecorder;
import dev.sluice.spi.ResolvedItem;
import java.util.ArrayList;
import java.util.List;

/**
 * The last stage: lets the local steps learn from the store's answers, puts the local steps'
 * decisions and the store's together in request order (repeated items each reported with their
 * own cost), tells the {@link DenialRecorder} of each denied item, and then the listeners.
 */
final class Assemble {
  private final LocalStage local;
  private final DecisionListener[] listeners;
  private volatile DenialRecorder recorder = DenialRecorder.NONE;

  Assemble(LocalStage local, DecisionListener[] listeners) {
    this.local = local;
    this.listeners = listeners;
  }

  void recorder(DenialRecorder r) {
    this.recorder = r == null ? DenialRecorder.NONE : r;
  }

  /** Whether a decision is to be timed: only for listeners, as a clock read costs about a decision. */
  boolean heard() {
    return listeners.length != 0;
  }

  /**
   * The decision of {@code r} from the store's decisions of its batch ({@code decided}, in order;
   * or, {@code degraded}, the failure modes'). When the local steps decided nothing and every item
   * is distinct, the store's list is the decision's as it is.
   */
  Decision decision(Resolved r, List<ItemDecision> decided, boolean degraded) {
    if (!degraded) {
      local.after(r, decided);
    }
    if (r.pre() != null || r.skipStore()) {
      decided = withLocal(r, decided);
      local.undoIfDenied(r, decided);
    }
    if (!degraded) {
      DenialRecorder rec = recorder;
      for (int i = 0; i < decided.size(); i++) {
        record(rec, decided.get(i));
      }
    }
    if (r.slot() == null) {
      return Decision.of(decided, degraded);
    }
    List<Item> items = r.request().items();
    List<ItemDecision> out = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      ItemDecision d = decided.get(r.slot()[i]);
      if (d.cost() != items.get(i).cost()) {
        d = new ItemDecision(d.rule(), d.key(), items.get(i).cost(), d.allowed(), d.reason(), d.waitMs(), d.windows(),
            d.shadow(), d.blockedMs(), d.leased());
      }
      out.add(d);
    }
    return Decision.of(out, degraded);
  }

  /**
   * {@code d}, the decision of a request of one item that the store decided alone ({@link
   * dev.sluice.spi.Store#decideAlone}), after telling the {@link DenialRecorder} of a denied item,
   * as {@link #decision} does when no local step acts on the item and none learns; {@code atMicros}
   * the time of the decision if read from the limiter's ticker, else {@link DenialRecorder#UNREAD}.
   */
  Decision alone(Decision d, long atMicros) {
    ItemDecision item = d.items().get(0);
    if (!item.allowed()) {
      denied(recorder, item.rule(), item.key(), atMicros);
    }
    return d;
  }

  /** Tells the {@link DenialRecorder} of a denied item. */
  private static void record(DenialRecorder rec, ItemDecision d) {
    if (!d.allowed()) {
      denied(rec, d.rule(), d.key(), DenialRecorder.UNREAD);
    }
  }

  /**
   * Tells the {@link DenialRecorder} of an item a boolean path denied, without a decision built, at
   * {@code atMicros} as in {@link #alone}.
   */
  void denied(String rule, String key, long atMicros) {
    denied(recorder, rule, key, atMicros);
  }

  private static void denied(DenialRecorder rec, String rule, String key, long atMicros) {
    try {
      rec.denied(rule, key, atMicros);
    } catch (RuntimeException ignored) {
      // Counting must not change a decision.
    }
  }

  /** Tells the listeners of {@code d}, made since {@code startNanos}. */
  void notify(Request request, Decision d, long startNanos) {
    if (listeners.length == 0) {
      return;
    }
    long nanos = System.nanoTime() - startNanos;
    for (DecisionListener l : listeners) {
      try {
        l.onDecision(request, d, nanos);
      } catch (RuntimeException ignored) {
        // A listener must not change a decision.
      }
    }
  }

  /**
   * The decisions of every distinct item: the local steps', and the store's for the rest (or,
   * when the store was not called, allowed with empty windows: nothing was decided for them).
   */
  private static List<ItemDecision> withLocal(Resolved r, List<ItemDecision> fromStore) {
    List<ResolvedItem> sent = r.batch().items();
    ItemDecision[] pre = r.pre();
    int n = sent.size() + (pre == null ? 0 : countNonNull(pre));
    List<ItemDecision> out = new ArrayList<>(n);
    int j = 0;
    for (int i = 0; i < n; i++) {
      ItemDecision d = pre == null ? null : pre[i];
      if (d == null) {
        if (r.skipStore()) {
          ResolvedItem it = sent.get(j++);
          d = new ItemDecision(it.rule().name(), it.key(), it.cost(), true, DenyReason.NONE, 0, List.of(),
              it.rule().shadow(), 0);
        } else {
          d = fromStore.get(j++);
        }
      }
      out.add(d);
    }
    return out;
  }

  private static int countNonNull(Object[] a) {
    int c = 0;
    for (Object o : a) {
      if (o != null) {
        c++;
      }
    }
    return c;
  }
}
