package dev.sluice.server.http;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Policies;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * The budget B of keys of a leased rule as the limiter leases them: the rule's slack of the
 * windows each key is decided under, its live limit's where it has one. One page of the rule's
 * live limits is read; only when the rule has more than a page are the keys not on it looked up
 * one by one (at most as many as the caller shows).
 */
final class LeaseBudgets {
  private LeaseBudgets() {}

  /** @param policies the limiter's, null when its store keeps none (every key then has its rule's windows) */
  static CompletableFuture<ToLongFunction<String>> of(Policies policies, RuleSet rules, Rule rule,
      Collection<String> keys) {
    if (policies == null || keys.isEmpty()) {
      return CompletableFuture.completedFuture(key -> budget(rule, rules, null, key));
    }
    return policies.limits(rule.name(), null, Policies.MAX_PAGE).toCompletableFuture().thenCompose(page -> {
      Map<String, LiveLimit> live = new HashMap<>();
      for (KeyLimit k : page.items()) {
        live.put(k.key(), k.limit());
      }
      if (page.next() == null) {
        return CompletableFuture.completedFuture(key -> budget(rule, rules, live.get(key), key));
      }
      Map<String, CompletableFuture<java.util.Optional<LiveLimit>>> more = new HashMap<>();
      for (String key : keys) {
        if (!live.containsKey(key)) {
          more.put(key, policies.limit(rule.name(), key).toCompletableFuture());
        }
      }
      return CompletableFuture.allOf(more.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
        more.forEach((key, f) -> f.join().ifPresent(l -> live.put(key, l)));
        return key -> budget(rule, rules, live.get(key), key);
      });
    });
  }

  private static long budget(Rule rule, RuleSet rules, LiveLimit live, String key) {
    List<Window> ws = live == null ? null : live.windowsUnder(rules);
    return rule.lease().budget(ws != null ? ws : rule.windowsFor(key));
  }
}
