package dev.sluice.internal.policy;

import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.policy.LiveLimit;
import dev.sluice.Window;
import java.util.List;

/**
 * The local step of live limits: a key given a limit at run time is decided under its windows
 * (a tier's as the rules in force define it), unless the request gave the item windows of its
 * own. It shapes; it never answers.
 */
public final class LiveLimitStep extends CachedPolicyStep {

  public LiveLimitStep(PolicyCache cache) {
    super(cache);
  }

  @Override
  public ItemDecision before(LocalItem item) {
    if (item.shaped()) {
      return null;
    }
    List<Window> ws = liveWindows(cache, item.ruleSet(), item.rule(), item.key());
    if (ws != null) {
      item.windows(ws);
    }
    return null;
  }

  /**
   * The windows of {@code key}'s live limit under {@code rule}, or null when it has none (or a
   * tier no longer in force: the key's own windows then).
   */
  static List<Window> liveWindows(PolicyCache cache, RuleSet rules, Rule rule, String key) {
    PolicyCache.RulePolicies p = cache.of(rule.name());
    LiveLimit l = p == null ? null : p.limit(key);
    return l == null ? null : l.windowsUnder(rules);
  }

  /** The windows {@code key} is decided under, as this step leaves them: its live limit's, else its rule's. */
  static List<Window> windowsOf(PolicyCache cache, RuleSet rules, Rule rule, String key) {
    List<Window> ws = liveWindows(cache, rules, rule, key);
    return ws != null ? ws : rule.windowsFor(key);
  }
}
