package dev.sluice.internal.policy;

import dev.sluice.DecisionListener;
import dev.sluice.internal.lease.LeaseStep;
import dev.sluice.spi.Store;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/** The local steps of a limiter, in the order a request meets them; the one place a step is added. */
public final class LocalSteps {
  private LocalSteps() {}

  /**
   * Access lists (the deny list first), then bans, then live limits, then leases, then a remote
   * store's recent denials: an item answered by the lists is never looked up further, and the denial cache sees
   * the windows a live limit gave.
   *
   * @param records whether the store keeps policy records (bans it answers are then recorded)
   * @param denials the denial cache, null when there is none
   * @param store the limiter's store: leased mode's step when it can lease units
   * @param ruleSet the rules in force (leased mode's leader sizes their keys, live limits' tiers are theirs)
   * @param maxKeyBytes the longest key, in bytes (what the leader reads of other instances' reports)
   */
  public static List<LocalStep> inOrder(PolicyCache cache, Ticker ticker, boolean records, DenialCache denials,
      DecisionListener[] listeners, Store store, Supplier<RuleSet> ruleSet, int maxKeyBytes, String instanceId) {
    Function<String, Rule> rules = name -> ruleSet.get().get(name);
    List<LocalStep> steps = new ArrayList<>();
    steps.add(new AccessLists(cache));
    steps.add(new CachedBans(cache, ticker, records));
    steps.add(new LiveLimitStep(cache));
    if (store.grants().isPresent() && store.leaseBoard().isPresent()) {
      // A key with a live limit is leased under its windows: the leader sizes it by the same ones.
      steps.add(new LeaseStep(store.grants().get(), store.leaseBoard().get(), instanceId, ticker, LeaseStep.MAX_KEYS, rules,
          (rule, key) -> LiveLimitStep.windowsOf(cache, ruleSet.get(), rule, key), maxKeyBytes, listeners));
    }
    if (denials != null) {
      steps.add(new CachedDenials(denials, listeners));
    }
    return steps;
  }
}
