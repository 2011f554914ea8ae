package dev.sluice.server.http;

import dev.sluice.policy.Ban;
import dev.sluice.InvalidKeyException;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.ListEntry;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Offender;
import dev.sluice.policy.Page;
import dev.sluice.policy.Policies;
import dev.sluice.RuleSet;
import dev.sluice.UnknownRuleException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Policies in maps, for tests of the HTTP mapping alone: the rules of the {@link Policies}
 * contract that the API relies on (unknown rules, bad keys and entries refused), nothing of a
 * store's. Every call is counted, so that a test can tell that a refused request reached nothing.
 */
final class MapPolicies implements Policies {
  final RuleSet rules;
  final Clock clock;
  final TreeMap<String, KeyLimit> limits = new TreeMap<>();
  final TreeMap<String, Ban> bans = new TreeMap<>();
  final Map<ListKind, TreeMap<String, String>> lists = new LinkedHashMap<>();
  final Map<String, List<String>> audit = new LinkedHashMap<>();
  final Map<String, List<Offender>> top = new LinkedHashMap<>();
  int calls;
  /** When set, every call fails with it, as a store that fails does. */
  RuntimeException failure;

  MapPolicies(RuleSet rules, Clock clock) {
    this.rules = rules;
    this.clock = clock;
    lists.put(ListKind.ALLOW, new TreeMap<>());
    lists.put(ListKind.DENY, new TreeMap<>());
  }

  private <T> CompletionStage<T> call(String rule, String key, java.util.function.Supplier<T> f) {
    calls++;
    if (failure != null) {
      return CompletableFuture.failedFuture(failure);
    }
    try {
      if (rule != null && rules.get(rule) == null) {
        throw new UnknownRuleException(rule);
      }
      if (key != null && key.length() > 512) {
        throw new InvalidKeyException(rule, 0, key.length(), "is " + key.length() + " bytes of UTF-8; the maximum is 512");
      }
      return CompletableFuture.completedFuture(f.get());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static String id(String rule, String key) {
    return rule + ' ' + key;
  }

  private static <T> Page<T> page(TreeMap<String, T> map, String rule, String after, int count) {
    if (count < 1 || count > MAX_PAGE) {
      throw new IllegalArgumentException("count must be 1 to " + MAX_PAGE + ", was " + count);
    }
    List<T> items = new ArrayList<>();
    String last = null;
    for (Map.Entry<String, T> e : (after == null ? map : map.tailMap(after, false)).entrySet()) {
      if (rule != null && !e.getKey().startsWith(rule + ' ')) {
        continue;
      }
      if (items.size() == count) {
        return new Page<>(items, last);
      }
      items.add(e.getValue());
      last = e.getKey();
    }
    return new Page<>(items, null);
  }

  @Override
  public CompletionStage<Void> setLimit(String rule, String key, LiveLimit limit) {
    return call(rule, key, () -> {
      if (limit.tier() != null && rules.tier(limit.tier()) == null) {
        throw new IllegalArgumentException("unknown tier '" + limit.tier() + "'");
      }
      limits.put(id(rule, key), new KeyLimit(rule, key, limit));
      return null;
    });
  }

  @Override
  public CompletionStage<Optional<LiveLimit>> limit(String rule, String key) {
    return call(rule, key, () -> Optional.ofNullable(limits.get(id(rule, key))).map(KeyLimit::limit));
  }

  @Override
  public CompletionStage<Boolean> removeLimit(String rule, String key) {
    return call(rule, key, () -> limits.remove(id(rule, key)) != null);
  }

  @Override
  public CompletionStage<Page<KeyLimit>> limits(String rule, String after, int count) {
    return call(rule, null, () -> page(limits, rule, after, count));
  }

  @Override
  public CompletionStage<Void> ban(String rule, String key, Instant until) {
    return call(rule, key, () -> {
      if (!until.isAfter(clock.instant())) {
        throw new IllegalArgumentException("until is in the past");
      }
      bans.put(id(rule, key), new Ban(rule, key, until.toEpochMilli(), false));
      return null;
    });
  }

  @Override
  public CompletionStage<Optional<Ban>> ban(String rule, String key) {
    return call(rule, key, () -> Optional.ofNullable(bans.get(id(rule, key))));
  }

  @Override
  public CompletionStage<Boolean> unban(String rule, String key) {
    return call(rule, key, () -> bans.remove(id(rule, key)) != null);
  }

  @Override
  public CompletionStage<Page<Ban>> bans(String rule, String after, int count) {
    return call(rule, null, () -> page(bans, rule, after, count));
  }

  @Override
  public CompletionStage<Void> addToList(ListKind kind, String rule, String entry) {
    return call(rule, null, () -> {
      if (entry.contains(" ") || (entry.contains("/") && !entry.matches(".*:[0-9a-f.:]+/\\d+"))) {
        throw new IllegalArgumentException("entry '" + entry + "' is neither a key, a prefix* nor a prefix and a CIDR");
      }
      lists.get(kind).put(id(rule, entry), entry);
      return null;
    });
  }

  @Override
  public CompletionStage<Boolean> removeFromList(ListKind kind, String rule, String entry) {
    return call(rule, null, () -> lists.get(kind).remove(id(rule, entry)) != null);
  }

  @Override
  public CompletionStage<Page<ListEntry>> lists(ListKind kind, String after, int count) {
    return call(null, null, () -> {
      TreeMap<String, ListEntry> all = new TreeMap<>();
      lists.get(kind).forEach((id, e) -> all.put(id, new ListEntry(id.substring(0, id.indexOf(' ')), e)));
      return page(all, null, after, count);
    });
  }

  @Override
  public CompletionStage<Page<String>> list(ListKind kind, String rule, String after, int count) {
    return call(rule, null, () -> {
      TreeMap<String, String> ofRule = new TreeMap<>();
      lists.get(kind).forEach((id, e) -> {
        if (id.startsWith(rule + ' ')) {
          ofRule.put(e, e);
        }
      });
      return page(ofRule, null, after, count);
    });
  }

  @Override
  public CompletionStage<List<String>> audit(String rule, String key) {
    return call(rule, key, () -> audit.getOrDefault(id(rule, key), List.of()));
  }

  @Override
  public CompletionStage<List<Offender>> top(String rule, Duration last, int count) {
    return call(rule, null, () -> {
      List<Offender> all = top.getOrDefault(rule + ' ' + last.toMinutes(), List.of());
      return all.subList(0, Math.min(count, all.size()));
    });
  }

  /** A map of the state, to compare before and after a refused request. */
  Map<String, Object> snapshot() {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("limits", new TreeMap<>(limits));
    s.put("bans", new TreeMap<>(bans));
    lists.forEach((k, v) -> s.put(k.wireName(), new TreeMap<>(v)));
    return s;
  }
}
