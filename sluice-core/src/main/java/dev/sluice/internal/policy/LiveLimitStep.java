package dev.sluice.internal.policy;

import dev.sluice.ItemDecision;
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
    PolicyCache.RulePolicies p = cache.of(item.rule().name());
    LiveLimit l = p == null ? null : p.limit(item.key());
    if (l != null) {
      List<Window> ws = l.windowsUnder(item.ruleSet()); // null for a tier no longer in force: the key's own
      if (ws != null) {
        item.windows(ws);
      }
    }
    return null;
  }
}
