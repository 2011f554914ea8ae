package dev.sluice.internal.policy;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.WindowState;
import java.util.List;

/**
 * The local step of access lists, configured and added at run time: a key on the deny list is
 * denied ({@link DenyReason#DENY_LISTED}, never to be retried), one on the allow list admitted,
 * neither sent to the store. The deny list wins over the allow list.
 */
public final class AccessLists extends CachedPolicyStep {

  public AccessLists(PolicyCache cache) {
    super(cache);
  }

  @Override
  public ItemDecision before(LocalItem item) {
    PolicyCache.RulePolicies p = cache.of(item.rule().name());
    if (p == null) {
      return null;
    }
    Rule rule = item.rule();
    if (p.denies(item.key())) {
      return new ItemDecision(rule.name(), item.key(), item.cost(), false, DenyReason.DENY_LISTED, 0, List.of(),
          rule.shadow(), WindowState.NEVER);
    }
    if (p.allows(item.key())) {
      return new ItemDecision(rule.name(), item.key(), item.cost(), true, DenyReason.NONE, 0, List.of(), rule.shadow(),
          0);
    }
    return null;
  }
}
