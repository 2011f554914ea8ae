package dev.sluice.internal.policy;

import dev.sluice.Rule;

/**
 * A local step over the store's policies as the {@link PolicyCache} last read them: it acts on a
 * rule only while the cache holds something for it, and the steps over one cache share that look.
 */
abstract class CachedPolicyStep implements LocalStep {
  final PolicyCache cache;

  CachedPolicyStep(PolicyCache cache) {
    this.cache = cache;
  }

  @Override
  public final boolean acts(Rule rule) {
    return cache.of(rule.name()) != null;
  }

  @Override
  public final Object source() {
    return cache;
  }
}
