package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.InvalidCostException;
import dev.sluice.InvalidKeyException;
import dev.sluice.Item;
import dev.sluice.OperationRequest;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.UnknownRuleException;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import dev.sluice.algorithm.LeakyBucket;
import dev.sluice.internal.policy.RequestChecks;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The first stage: validates a request against the rules in force, resolves an operation into
 * items, merges repeated items, and hands the distinct items to the local steps when some may act
 * on them; otherwise the batch goes to the store as it is.
 */
final class Resolver implements RequestChecks {
  /** Up to this many items, a request's repeated items are found by comparing pairs. */
  private static final int FEW_ITEMS = 8;

  private final Store store;
  private final int maxKeyBytes;
  private final LocalStage local;
  private volatile RuleSet rules;

  Resolver(Store store, int maxKeyBytes, LocalStage local, RuleSet rules) {
    this.store = store;
    this.maxKeyBytes = maxKeyBytes;
    this.local = local;
    this.rules = rules;
  }

  @Override
  public RuleSet rules() {
    return rules;
  }

  void rules(RuleSet next) {
    this.rules = next;
  }

  /**
   * Refuses rules the store cannot decide, before any is in force (see {@link Store#check}):
   * rules that ban or audit on a store that keeps no policy records, and leased rules on a store
   * that offers no {@link Store#grants()} or {@link Store#leaseBoard()}.
   */
  static void check(Store store, boolean records, RuleSet rules) {
    for (Rule r : rules.rules()) {
      store.check(r);
      if (r.lease() != null && (store.grants().isEmpty() || store.leaseBoard().isEmpty())) {
        throw new UnsupportedRuleException(r.name(), "rule '" + r.name() + "': " + store.describe()
            + " cannot lease units to instances, so it cannot decide mode: leased; use mode: exact");
      }

      if (!records && (r.ban() != null || r.audit() != null)) {
        throw new UnsupportedRuleException(r.name(), "rule '" + r.name() + "': " + store.describe()
            + " keeps no policies, so it cannot " + (r.ban() != null ? "ban keys" : "keep an audit"));
      }
    }
  }

  Resolved resolve(Request request) {
    return resolve(request, rules, null);
  }

  /**
   * Resolves an operation request against one snapshot of the rules in force, so that its
   * operation and the rules its items name come from the same configuration.
   */
  Resolved resolve(OperationRequest operation) {
    RuleSet rs = rules;
    return resolve(rs.resolve(operation), rs, operation);
  }

  private Resolved resolve(Request request, RuleSet rs, OperationRequest operation) {
    long start = local.start(request);
    List<Item> items = request.items();
    if (items.size() == 1) {
      Item it = items.get(0);
      Rule rule = validate(rs.get(it.rule()), it.rule(), it.key(), 0);
      if (it.windows() == null && (operation == null || rule.audit() == null) && !local.acts(rule)) {
        return new Resolved(request, new Batch(List.of(resolveItem(rule, it.key(), it.cost())), request.timeMicros()),
            null, operation, start);
      }
      return local.before(request, items, List.of(rule), null, rs, operation, start, this);
    }
    // Repeated (rule, key) pairs are decided as one item of their summed cost. Each pair is checked
    // when first seen, in request order, so the first bad item is the one reported. A few items
    // are compared pair by pair; a hash of their names would cost more than the whole comparison.
    int n = items.size();
    Map<String, Integer> seen = n > FEW_ITEMS ? new HashMap<>() : null;
    List<Item> merged = new ArrayList<>(n);
    List<Rule> ruleOf = new ArrayList<>(n);
    int[] slot = new int[n];
    boolean plain = true;
    for (int i = 0; i < n; i++) {
      Item it = items.get(i);
      String id = seen == null ? null : it.rule() + '\u0000' + it.key();
      int at = seen == null ? indexOf(merged, it) : seen.getOrDefault(id, -1);
      if (at < 0) {
        Rule rule = validate(rs.get(it.rule()), it.rule(), it.key(), i);
        ruleOf.add(rule);
        plain &= it.windows() == null && (operation == null || rule.audit() == null) && !local.acts(rule);
        if (seen != null) {
          seen.put(id, merged.size());
        }
        slot[i] = merged.size();
        merged.add(it);
      } else {
        slot[i] = at;
        Item prev = merged.get(at);
        if (it.cost() > Long.MAX_VALUE - prev.cost()) {
          throw new InvalidCostException(it.rule(), it.cost(), "the costs of the repeated item (rule '" + it.rule()
              + "', key '" + it.key() + "') add up to more than " + Long.MAX_VALUE);
        }
        merged.set(at, new Item(prev.rule(), prev.key(), prev.cost() + it.cost(), prev.windows()));
      }
    }
    if (merged.size() == n) {
      slot = null; // every item distinct: decisions come back in request order
    }
    if (!plain) {
      return local.before(request, merged, ruleOf, slot, rs, operation, start, this);
    }
    List<ResolvedItem> resolved = new ArrayList<>(merged.size());
    for (int i = 0; i < merged.size(); i++) {
      Item it = merged.get(i);
      resolved.add(resolveItem(ruleOf.get(i), it.key(), it.cost()));
    }
    return new Resolved(request, new Batch(resolved, request.timeMicros()), slot, operation, start);
  }

  /** The index of the item in {@code distinct} with the same rule and key as {@code it}, or -1. */
  private static int indexOf(List<Item> distinct, Item it) {
    for (int j = 0; j < distinct.size(); j++) {
      Item d = distinct.get(j);
      if (d.key().equals(it.key()) && d.rule().equals(it.rule())) {
        return j;
      }
    }
    return -1;
  }

  static ResolvedItem resolveItem(Rule rule, String key, long cost) {
    return new ResolvedItem(rule, key, cost, rule.windowsFor(key));
  }

  @Override
  public Rule validateKey(String ruleName, String key) {
    java.util.Objects.requireNonNull(key, "key");
    return validate(rules.get(ruleName), ruleName, key, 0);
  }

  /**
   * The limiter's one check of a rule and a key, for every path in (acquire, tryAcquire, reset):
   * front ends map its exceptions by type and check nothing of their own.
   *
   * @param rule the rule named {@code ruleName}, null if none is in force
   * @param item the position of the item in its request
   * @return {@code rule}
   * @throws UnknownRuleException if {@code rule} is null
   * @throws InvalidKeyException if {@code key} is empty, not valid Unicode or too long
   */
  Rule validate(Rule rule, String ruleName, String key, int item) {
    if (rule == null) {
      throw new UnknownRuleException(ruleName);
    }
    if (key.isEmpty()) {
      throw new InvalidKeyException(ruleName, item, 0, "must not be empty");
    }
    long bytes = utf8Length(key, ruleName, item);
    if (bytes > maxKeyBytes) {
      throw new InvalidKeyException(ruleName, item, bytes,
          "is " + bytes + " bytes of UTF-8; the maximum is " + maxKeyBytes);
    }
    return rule;
  }

  /**
   * The key's length in UTF-8. A lone surrogate has no UTF-8 form: encoders replace it with '?',
   * so two distinct keys would become one in any store that keeps bytes. Such keys are rejected.
   */
  private static long utf8Length(String key, String rule, int item) {
    int n = key.length();
    int ascii = 0;
    while (ascii < n && key.charAt(ascii) < 0x80) {
      ascii++; // the common key: one byte per char, and nothing else to check
    }
    long bytes = ascii;
    for (int i = ascii; i < n; i++) {
      char c = key.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (!Character.isSurrogate(c)) {
        bytes += 3;
      } else if (Character.isHighSurrogate(c) && i + 1 < key.length() && Character.isLowSurrogate(key.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        throw new InvalidKeyException(rule, item, -1, "has a lone surrogate (U+"
            + Integer.toHexString(c).toUpperCase(java.util.Locale.ROOT) + ") at index " + i
            + "; a key must be valid Unicode");
      }
    }
    return bytes;
  }

  /**
   * Refuses windows the store could not decide for {@code rule}, as if they were the rule's own (a
   * live limit's, or a request's own windows).
   *
   * @throws dev.sluice.UnsupportedRuleException or IllegalArgumentException naming what is out of range
   */
  @Override
  public void checkWindows(Rule rule, List<Window> windows) {
    Rule copy = rule.toBuilder().windows(windows).build();
    if (rule.algorithm() == Algorithm.LEAKY_BUCKET) {
      long maxWait;
      try {
        maxWait = LeakyBucket.maxWaitMicros(copy, windows);
      } catch (ArithmeticException e) {
        maxWait = -1;
      }
      if (maxWait < 0) {
        throw new IllegalArgumentException("rule '" + rule.name() + "' is a leaky bucket: with these windows its"
            + " max_wait would be out of range");
      }
    }
    store.check(copy);
  }
}
