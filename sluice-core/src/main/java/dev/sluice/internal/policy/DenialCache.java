package dev.sluice.internal.policy;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The denials a remote store answered, each kept until just before its cost could fit, so that a
 * key that keeps asking while it is over its limit (a client in a retry loop, an attack) is
 * answered by this instance without a round trip.
 *
 * <p><b>It never admits what the store would deny</b>: it only ever denies; every request it does
 * not deny goes to the store.
 *
 * <p><b>It denies only what the store would deny</b>, as long as nobody resets the key through
 * another instance. A denial of cost {@code c} with {@code retryAfterMs = R} says that {@code c}
 * fits no sooner than {@code R} after the store decided, if no other traffic comes; traffic from
 * any instance only pushes that time further. The entry lasts until {@code start + R − 1 ms}, where
 * {@code start} was read before the store was called (so before it decided) and {@code R} was
 * rounded up to the millisecond: it ends strictly before the cost can fit. It answers only a cost
 * of at least {@code c} (a smaller one may fit sooner), never a peek, and only while the item's
 * rule and windows are those it was denied under: a reload, a live limit or an override that
 * changes them makes the entry miss, and the store decides.
 *
 * <p>Denials of shadow rules (reported, not enforced) and of rules that ban (the store counts their
 * denials) are not kept; nor are degraded decisions, or requests at an explicit time. Nor does it
 * answer a request with an item of a rule that bans, whichever item it holds a denial of: the
 * store counts each denial of such a request toward the ban, so each must reach it. Once the
 * store starts the ban, the limiter's cache of bans answers those requests without it.
 *
 * <p>Bounded: at most {@code maxKeys} entries. When it is full, expired entries are swept (at
 * most every {@value #SWEEP_EVERY_MICROS} µs); if it is still full, a new denial is not kept and the
 * store goes on deciding that key.
 */
public final class DenialCache {
  static final long SWEEP_EVERY_MICROS = 100_000;

  /** What the store said, for whom, and until when it holds. */
  private record Entry(Rule rule, List<Window> windows, long cost, ItemDecision decision, long startMicros,
      long untilMicros) {}

  /** By rule name, then key: a lookup allocates nothing. */
  private final Map<String, ConcurrentHashMap<String, Entry>> byRule = new ConcurrentHashMap<>();
  private final AtomicInteger size = new AtomicInteger();
  private final int maxKeys;
  private volatile long nextSweepMicros = Long.MIN_VALUE;

  /** @param maxKeys at least 1 */
  public DenialCache(int maxKeys) {
    if (maxKeys < 1) {
      throw new IllegalArgumentException("maxKeys must be >= 1, was " + maxKeys);
    }
    this.maxKeys = maxKeys;
  }

  /**
   * {@link #check} for an item of a request whose items are of {@code rules}: null also when one
   * of them bans, as the store counts each denial of such a request toward the ban. The rules are
   * looked at only on a hit, so requests the cache holds nothing for pay nothing more.
   */
  public ItemDecision check(Rule rule, String key, long cost, List<Window> windows, long nowMicros, List<Rule> rules) {
    ItemDecision d = check(rule, key, cost, windows, nowMicros);
    if (d != null) {
      for (int i = 0; i < rules.size(); i++) {
        if (rules.get(i).ban() != null) {
          return null;
        }
      }
    }
    return d;
  }

  public boolean isEmpty() {
    return size.get() <= 0;
  }

  int size() {
    return size.get();
  }

  /**
   * The denial of {@code cost} units of {@code rule} for {@code key} under {@code windows} at
   * {@code nowMicros}, if a denial kept here still holds: the store's decision with its times
   * counted down; otherwise null (always for a shadow rule, whose denials are never kept).
   */
  public ItemDecision check(Rule rule, String key, long cost, List<Window> windows, long nowMicros) {
    if (cost == 0 || isEmpty()) {
      return null;
    }
    ConcurrentHashMap<String, Entry> keys = byRule.get(rule.name());
    Entry e = keys == null ? null : keys.get(key);
    if (e == null) {
      return null;
    }
    if (nowMicros >= e.untilMicros) {
      if (keys.remove(key, e)) {
        size.decrementAndGet();
      }
      return null;
    }
    if (e.rule != rule || cost < e.cost || !e.windows.equals(windows)) {
      return null;
    }
    // Rounded up: the store's times were, so the counted-down ones are never later than its own.
    return countedDown(e, cost, Math.floorDiv(nowMicros - e.startMicros + 999, 1000));
  }

  /**
   * Keeps the store's denial {@code d} of {@code cost} units of {@code rule} for {@code key} under
   * {@code windows}, the store having been called at {@code startMicros}, if it is one that holds
   * for a while: an enforced denial by the windows, with a retry time longer than a millisecond.
   */
  public void learn(Rule rule, String key, long cost, List<Window> windows, ItemDecision d, long startMicros) {
    // A rule that bans counts denials in the store: each must reach it. Its ban, once started, is
    // answered by this instance all the same (the policy cache).
    if (rule.ban() != null || d.allowed() || d.shadow() || cost == 0
        || d.reason() != DenyReason.LIMIT_EXCEEDED && d.reason() != DenyReason.WAIT_EXCEEDS_MAX_WAIT) {
      return;
    }
    long retry = d.retryAfterMs();
    if (retry <= 1) { // NEVER (-1) is a cost above the limit: a client mistake, not a caller to hold back
      return;
    }
    long until = startMicros + (retry - 1) * 1000;
    if (size.get() >= maxKeys && !makeRoom(startMicros)) {
      return;
    }
    Entry e = new Entry(rule, windows, cost, d, startMicros, until);
    if (byRule.computeIfAbsent(rule.name(), r -> new ConcurrentHashMap<>()).put(key, e) == null) {
      size.incrementAndGet();
    }
  }

  /** Drops what is kept of {@code key} under {@code rule} (it was reset through this limiter). */
  public void forget(String rule, String key) {
    ConcurrentHashMap<String, Entry> keys = byRule.get(rule);
    if (keys != null && keys.remove(key) != null) {
      size.decrementAndGet();
    }
  }

  /** Sweeps expired entries, at most every {@link #SWEEP_EVERY_MICROS}; whether there is room now. */
  private boolean makeRoom(long nowMicros) {
    if (nowMicros >= nextSweepMicros) {
      nextSweepMicros = nowMicros + SWEEP_EVERY_MICROS;
      for (ConcurrentHashMap<String, Entry> keys : byRule.values()) {
        keys.forEach((key, e) -> {
          if (nowMicros >= e.untilMicros && keys.remove(key, e)) {
            size.decrementAndGet();
          }
        });
      }
    }
    return size.get() < maxKeys;
  }

  /** {@code e}'s decision, reported for {@code cost}, {@code elapsedMs} after the store made it. */
  private static ItemDecision countedDown(Entry e, long cost, long elapsedMs) {
    ItemDecision d = e.decision;
    List<WindowState> ws = new ArrayList<>(d.windows().size());
    for (WindowState w : d.windows()) {
      long retry = w.retryAfterMs();
      boolean exceeded = w.exceeded();
      if (exceeded && retry != WindowState.NEVER) {
        retry = Math.max(0, retry - elapsedMs);
        exceeded = retry > 0;
      }
      ws.add(new WindowState(w.limit(), w.periodMs(), w.remaining(), retry, Math.max(0, w.resetAfterMs() - elapsedMs),
          exceeded));
    }
    return new ItemDecision(d.rule(), d.key(), cost, false, d.reason(), d.waitMs(), ws, false, 0);
  }
}
