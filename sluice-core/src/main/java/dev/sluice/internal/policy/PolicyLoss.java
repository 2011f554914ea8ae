package dev.sluice.internal.policy;

import java.util.Map;
import java.util.Set;

/**
 * What a limiter's cache held that a store reset took away: the records held before a full read
 * that found the store's version lower than the one last read (a Redis restarted empty or
 * flushed) and that the store no longer has. Bans already over are not counted: they were gone
 * anyway. The store keeps no history across a reset, so this is the only place that knows.
 */
final class PolicyLoss {
  private PolicyLoss() {}

  static void report(Map<String, PolicyCache.RulePolicies> before, Map<String, PolicyCache.RulePolicies> after,
      long nowMillis, long fromVersion, long toVersion, PolicyLog log) {
    long limits = 0;
    long bans = 0;
    long entries = 0;
    for (PolicyCache.RulePolicies was : before.values()) {
      PolicyCache.RulePolicies now = after.get(was.rule);
      for (String key : was.limits.keySet()) {
        if (now == null || !now.limits.containsKey(key)) {
          limits++;
        }
      }
      for (Map.Entry<String, Long> ban : was.bans.entrySet()) {
        if (ban.getValue() > nowMillis && (now == null || !now.bans.containsKey(ban.getKey()))) {
          bans++;
        }
      }
      entries += missing(was.runtimeAllow, now == null ? Set.of() : now.runtimeAllow)
          + missing(was.runtimeDeny, now == null ? Set.of() : now.runtimeDeny);
    }
    log.lost(fromVersion, toVersion, limits, bans, entries);
  }

  private static long missing(Set<String> was, Set<String> now) {
    long n = 0;
    for (String e : was) {
      if (!now.contains(e)) {
        n++;
      }
    }
    return n;
  }
}
