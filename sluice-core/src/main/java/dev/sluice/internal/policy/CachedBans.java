package dev.sluice.internal.policy;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Ticker;
import dev.sluice.spi.ResolvedItem;
import java.util.List;

/**
 * The local step of bans: a key banned, as this limiter last read or learned, is denied
 * ({@link DenyReason#BANNED}, with the time left) without a store call. A ban the store answers
 * is learned: cached until it ends and recorded once as an automatic ban, for every instance and
 * for listings. Bans are learned from the store's answers only: a ban this limiter answered from
 * its cache may have been lifted since, and learning it again would bring it back.
 */
public final class CachedBans extends CachedPolicyStep {
  private final Ticker ticker;
  /** Whether the store keeps records, so that a ban it answered can be recorded. */
  private final boolean records;

  public CachedBans(PolicyCache cache, Ticker ticker, boolean records) {
    super(cache);
    this.ticker = ticker;
    this.records = records;
  }

  @Override
  public ItemDecision before(LocalItem item) {
    PolicyCache.RulePolicies p = cache.of(item.rule().name());
    if (p == null || !p.hasBans()) {
      return null;
    }
    long left = p.bannedFor(item.key(), item.nowMillis());
    if (left <= 0) {
      return null;
    }
    Rule rule = item.rule();
    return new ItemDecision(rule.name(), item.key(), item.cost(), false, DenyReason.BANNED, 0, List.of(),
        rule.shadow(), left);
  }

  @Override
  public boolean learns() {
    return records;
  }

  /** A store answers a ban only for a rule with a ban policy. */
  @Override
  public boolean learnsFrom(Rule rule) {
    return records && rule.ban() != null;
  }

  @Override
  public void after(ResolvedItem sent, ItemDecision d, long startMicros) {
    if (d.reason() == DenyReason.BANNED && d.blockedMs() > 0) {
      long until = Math.floorDiv(ticker.nowMicros(), 1000L) + d.blockedMs();
      if (cache.learnBan(d.rule(), d.key(), until)) {
        cache.recordBan(d.rule(), d.key(), until);
      }
    }
  }
}
