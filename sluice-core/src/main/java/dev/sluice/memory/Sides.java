package dev.sluice.memory;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The per-key policy side of the memory store: for rules that ban or audit, a {@link KeyPolicy}
 * per key (its ban, its counted denials, its audit list), beside the keys' states. The decision
 * reads bans before it locks any state and again under the locks, counts denials under them, and
 * records audit values after it unlocked them (see {@link Decisions}); the policy store starts
 * and lifts bans here.
 */
final class Sides {
  /**
   * The {@link KeyPolicy}s of one rule's keys. Unlike a key map's table it is kept across changes
   * of the rule's definition (a ban is about the key, not the windows), and dropped with the rule.
   * Its bytes are counted in an account of their own under the rule's name, so they share the
   * rule's guarantee and the pool by the same rules as states do.
   */
  private static final class Side {
    final ConcurrentHashMap<String, KeyPolicy> keys = new ConcurrentHashMap<>();
    final Budget.Account account;

    Side(String rule) {
      this.account = new Budget.Account(rule);
    }
  }

  private final Ticker ticker;
  private final Budget budget;
  /** By rule name, for rules that ban or audit. */
  private final ConcurrentHashMap<String, Side> sides = new ConcurrentHashMap<>();

  Sides(Ticker ticker, Budget budget) {
    this.ticker = ticker;
    this.budget = budget;
  }

  /** When the ban of {@code key} in force at {@code now} ends, or {@link Long#MIN_VALUE}. */
  long bannedUntil(String rule, String key, long now) {
    Side side = sides.get(rule);
    KeyPolicy p = side == null ? null : side.keys.get(key);
    return p == null ? Long.MIN_VALUE : p.bannedAt(now);
  }

  private Side side(String rule) {
    Side s = sides.get(rule);
    if (s == null) {
      s = sides.computeIfAbsent(rule, r -> {
        Side fresh = new Side(r);
        budget.open(fresh.account);
        return fresh;
      });
    }
    return s;
  }

  /**
   * Runs {@code change} on the policy of {@code key}, created if absent, under its monitor; false
   * when there is no room to create it (nothing is kept: a ban not started, a value not
   * recorded, never an over-admission).
   */
  boolean withPolicy(String rule, String key, Consumer<KeyPolicy> change) {
    while (true) {
      Side side = side(rule);
      KeyPolicy p = side.keys.get(key);
      if (p == null) {
        long bytes = KeyMap.keyBytes(key) + KeyPolicy.FIELDS;
        Budget.Refusal r = budget.reserve(side.account, 0, bytes);
        if (r == Budget.Refusal.RETIRED) {
          sides.remove(rule, side);
          continue;
        }
        if (r != null) {
          return false;
        }
        KeyPolicy created = new KeyPolicy();
        created.bytes = KeyPolicy.FIELDS;
        p = side.keys.putIfAbsent(key, created);
        if (p != null) {
          budget.release(side.account, 0, bytes);
        } else {
          p = created;
        }
      }
      synchronized (p) {
        if (p.dead) {
          continue; // swept between lookup and lock
        }
        change.accept(p);
        return true;
      }
    }
  }

  void countDenial(Rule rule, String key, long now) {
    withPolicy(rule.name(), key, p -> p.countDenial(rule.ban(), now));
  }

  /** Records {@code value} among the last distinct audit values of {@code key}, kept until {@code until}. */
  void recordAudit(Rule rule, String key, String value, long until) {
    int keep = rule.audit().keep();
    Side side = side(rule.name());
    withPolicy(rule.name(), key, p -> {
      long need = p.recordBytes(value, keep);
      if (budget.reserve(side.account, 0, need) == null) {
        long delta = p.record(value, keep, until);
        budget.release(side.account, 0, need - delta);
      }
    });
  }

  /** Bans {@code key} under the rule named {@code rule} until {@code untilMicros}; false without room. */
  boolean ban(String rule, String key, long untilMicros) {
    return withPolicy(rule, key, p -> p.ban(untilMicros));
  }

  /** Lifts a ban of {@code key} under the rule named {@code rule} and forgets its counted denials. */
  void unban(String rule, String key) {
    Side side = sides.get(rule);
    KeyPolicy p = side == null ? null : side.keys.get(key);
    if (p != null) {
      p.unban();
    }
  }

  /** The last distinct audited values that consumed {@code key} under the rule named {@code rule}, newest first. */
  List<String> audit(String rule, String key) {
    Side side = sides.get(rule);
    KeyPolicy p = side == null ? null : side.keys.get(key);
    return p == null ? List.of() : p.audit(ticker.nowMicros());
  }

  /** Drops the policies that hold nothing any more at {@code now}. Called by sweeps. */
  void sweep(long now) {
    for (Side side : sides.values()) {
      long removed = 0;
      for (Map.Entry<String, KeyPolicy> en : side.keys.entrySet()) {
        KeyPolicy p = en.getValue();
        synchronized (p) {
          if (!p.dead && p.expired(now)) {
            p.dead = true;
            if (side.keys.remove(en.getKey(), p)) {
              removed += KeyMap.keyBytes(en.getKey()) + p.bytes;
            }
          }
        }
      }
      if (removed > 0) {
        budget.release(side.account, 0, removed);
      }
    }
  }

  /** Drops the sides of rules that no longer ban or audit, and gives back what they held. */
  void rulesChanged(RuleSet after) {
    for (Map.Entry<String, Side> en : sides.entrySet()) {
      Rule now = after.get(en.getKey());
      if ((now == null || now.ban() == null && now.audit() == null) && sides.remove(en.getKey(), en.getValue())) {
        budget.close(en.getValue().account);
      }
    }
  }

  /** The bytes of every policy, counted afresh; for tests. */
  long recountBytes() {
    long bytes = 0;
    for (Side side : sides.values()) {
      for (Map.Entry<String, KeyPolicy> en : side.keys.entrySet()) {
        bytes += KeyMap.keyBytes(en.getKey()) + en.getValue().bytes;
      }
    }
    return bytes;
  }

  void clear() {
    sides.clear();
  }
}
