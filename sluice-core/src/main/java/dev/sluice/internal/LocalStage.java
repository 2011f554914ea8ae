package dev.sluice.internal;

import dev.sluice.Attribute;
import dev.sluice.AuditPolicy;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.OperationRequest;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.internal.policy.LocalItem;
import dev.sluice.internal.policy.LocalStep;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The local steps of a limiter, in order ({@link LocalStep}): which of them a request needs, and
 * running them over its distinct items before the store and over the store's answers after.
 */
final class LocalStage {
  private final LocalStep[] steps;
  /** The first step of each {@link LocalStep#source}: those {@link #acts} asks. */
  private final LocalStep[] gates;
  /** The steps that learn from the store's answers. */
  private final LocalStep[] learners;
  /** Whether some step needs the time before the store call. */
  private final boolean timed;
  private final Ticker ticker;

  LocalStage(List<LocalStep> steps, Ticker ticker) {
    this.steps = steps.toArray(new LocalStep[0]);
    Set<Object> sources = Collections.newSetFromMap(new IdentityHashMap<>());
    this.gates = steps.stream().filter(s -> sources.add(s.source())).toArray(LocalStep[]::new);
    this.learners = steps.stream().filter(LocalStep::learns).toArray(LocalStep[]::new);
    this.timed = steps.stream().anyMatch(LocalStep::timed);
    this.ticker = ticker;
  }

  /** Closes the steps that hold something of the store's (leased units), each once. */
  void close() {
    for (LocalStep s : steps) {
      if (s instanceof AutoCloseable c) {
        try {
          c.close();
        } catch (Exception e) {
          // Closing goes on: what a step could not give back, the store's windows forget.
        }
      }
    }
  }

  /** Whether some step may answer or shape an item of {@code rule} now. */
  boolean acts(Rule rule) {
    for (LocalStep s : gates) {
      if (s.acts(rule)) {
        return true;
      }
    }
    return false;
  }

  /** Whether some step learns from the store's answers for items of {@code rule} ({@link #after}). */
  boolean learnsFrom(Rule rule) {
    for (LocalStep s : learners) {
      if (s.learnsFrom(rule)) {
        return true;
      }
    }
    return false;
  }

  /** When the store is asked for {@code request}, if a step needs it; read before the store decides. */
  long start(Request request) {
    return !timed || request.hasExplicitTime() ? LocalItem.NO_START : ticker.nowMicros();
  }

  /**
   * Runs the steps over the distinct items of a request: what they decide goes to {@code pre}, the
   * rest to the store's batch with their windows and audit values.
   */
  Resolved before(Request request, List<Item> merged, List<Rule> ruleOf, int[] slot, RuleSet rs,
      OperationRequest operation, long start, Resolver checks) {
    int n = merged.size();
    ItemDecision[] pre = null;
    LocalStep[] by = null;
    boolean deniedHere = false;
    LocalItem item = new LocalItem(ticker, rs, ruleOf, start);
    List<ResolvedItem> toStore = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Item it = merged.get(i);
      Rule rule = ruleOf.get(i);
      List<Window> ws = it.windows();
      if (ws != null) {
        checks.checkWindows(rule, ws); // a request's own windows are refused as a rule's would be
      }
      item.next(rule, it.key(), it.cost(), ws);
      ItemDecision here = null;
      int s = 0;
      for (; s < steps.length && here == null; s++) {
        here = steps[s].before(item);
      }
      if (here != null) {
        if (pre == null) {
          pre = new ItemDecision[n];
          by = new LocalStep[n];
        }
        pre[i] = here;
        by[i] = steps[s - 1];
        deniedHere |= !here.allowed() && !rule.shadow();
        continue;
      }
      toStore.add(new ResolvedItem(rule, it.key(), it.cost(), item.windows(), auditValue(rule, rs, operation)));
    }
    return new Resolved(request, new Batch(toStore, request.timeMicros()), slot, operation, pre, by,
        deniedHere || toStore.isEmpty(), start);
  }

  /**
   * All or nothing: when the request ends denied ({@code all}, its distinct items' decisions), each
   * item a step admitted is handed back to that step ({@link LocalStep#undo}).
   */
  void undoIfDenied(Resolved r, List<ItemDecision> all) {
    LocalStep[] by = r.answeredBy();
    if (by == null) {
      return;
    }
    boolean denied = false;
    for (ItemDecision d : all) {
      denied |= !d.allowed() && !d.shadow();
    }
    if (!denied) {
      return;
    }
    ItemDecision[] pre = r.pre();
    for (int i = 0; i < by.length; i++) {
      if (by[i] != null && pre[i].allowed()) {
        by[i].undo(pre[i]);
      }
    }
  }

  /** Lets the steps that learn see the store's answers to what was sent (not degraded). */
  void after(Resolved r, List<ItemDecision> decided) {
    if (learners.length == 0 || r.skipStore()) {
      return;
    }
    List<ResolvedItem> sent = r.batch().items();
    for (LocalStep s : learners) {
      for (int i = 0; i < sent.size(); i++) {
        s.after(sent.get(i), decided.get(i), r.startMicros());
      }
    }
  }

  /** The request's value of the rule's audit attribute, as its keys are made of it; null if none. */
  private static String auditValue(Rule rule, RuleSet rs, OperationRequest operation) {
    AuditPolicy a = rule.audit();
    if (a == null || operation == null) {
      return null;
    }
    String v = operation.attributes().get(a.attribute());
    if (v == null) {
      return null;
    }
    Attribute typed = rs.attribute(a.attribute());
    return typed == null ? v : typed.keyText(v);
  }
}
