package dev.sluice.internal.policy;

import dev.sluice.policy.Ban;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.ListEntry;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Offender;
import dev.sluice.policy.Page;
import dev.sluice.policy.Policies;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.UnknownRuleException;
import dev.sluice.Window;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.PolicyRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The limiter's {@link Policies}: checks every argument before anything changes, writes to the
 * store's {@link PolicyRecords}, and applies the change to this limiter's cache at once (other
 * instances read it from the store within their next poll).
 *
 * <p>Paging: with a rule, {@code after} and {@link Page#next()} are keys of that rule; without
 * one (every rule), they are cursors {@code <rule> <key>} (rule names hold no space). A page as
 * long as the count asked for has a cursor, even when nothing follows it (the next page is then
 * empty).
 *
 */
public final class EnginePolicies implements Policies {
  private static final String MANUAL = "manual";
  private static final String AUTOMATIC = "automatic";

  private final RequestChecks checks;
  private final PolicyRecords store;
  private final PolicyCache cache;
  private final TopOffenders topOffenders;
  private final Ticker ticker;

  /**
   * @param checks the limiter's own checks of a rule name, a key and windows, so that the policies
   *     API refuses what a request would be refused
   */
  public EnginePolicies(RequestChecks checks, PolicyRecords store, PolicyCache cache, TopOffenders topOffenders,
      Ticker ticker) {
    this.checks = checks;
    this.store = store;
    this.cache = cache;
    this.topOffenders = topOffenders;
    this.ticker = ticker;
  }

  @Override
  public CompletionStage<Void> setLimit(String rule, String key, LiveLimit limit) {
    return checked(() -> {
      Rule r = checks.validateKey(rule, key);
      if (limit == null) {
        throw new IllegalArgumentException("limit must be given: a tier or windows");
      }
      RuleSet rs = checks.rules();
      List<Window> windows = limit.tier() != null ? rs.tier(limit.tier()) : limit.windows();
      if (windows == null) {
        throw new IllegalArgumentException("tier '" + limit.tier() + "' is not defined; tiers in force: "
            + (rs.tiers().isEmpty() ? "none" : String.join(", ", rs.tiers().keySet())));
      }
      checkWindows(r, windows);
      PolicyRecord record = new PolicyRecord(PolicyKind.LIMIT, rule, key, LiveLimits.encode(limit), 0);
      cache.checkRoom(record);
      return store.put(record).thenApply(v -> {
        cache.apply(record, null);
        return null;
      });
    });
  }

  @Override
  public CompletionStage<Optional<LiveLimit>> limit(String rule, String key) {
    return checked(() -> {
      checks.validateKey(rule, key);
      return store.get(PolicyKind.LIMIT, rule, key).thenApply(o -> o.flatMap(this::decode));
    });
  }

  @Override
  public CompletionStage<Boolean> removeLimit(String rule, String key) {
    return checked(() -> {
      checks.validateKey(rule, key);
      return store.remove(PolicyKind.LIMIT, rule, key).thenApply(had -> {
        cache.apply(null, new PolicyRecord(PolicyKind.LIMIT, rule, key, "", 0));
        return had;
      });
    });
  }

  @Override
  public CompletionStage<Page<KeyLimit>> limits(String rule, String after, int count) {
    return page(PolicyKind.LIMIT, rule, after, count, r -> decode(r).map(l -> new KeyLimit(r.rule(), r.key(), l))
        .orElse(null));
  }

  @Override
  public CompletionStage<Void> ban(String rule, String key, Instant until) {
    return checked(() -> {
      checks.validateKey(rule, key);
      if (until == null) {
        throw new IllegalArgumentException("until must be given");
      }
      long untilMillis;
      try {
        untilMillis = until.toEpochMilli();
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("until is out of range: " + until);
      }
      if (untilMillis <= Math.floorDiv(ticker.nowMicros(), 1000L)) {
        throw new IllegalArgumentException("until must be in the future, was " + until);
      }
      PolicyRecord record = new PolicyRecord(PolicyKind.BAN, rule, key, MANUAL, untilMillis);
      cache.checkRoom(record);
      return store.put(record).thenApply(v -> {
        cache.apply(record, null);
        return null;
      });
    });
  }

  @Override
  public CompletionStage<Optional<Ban>> ban(String rule, String key) {
    return checked(() -> {
      checks.validateKey(rule, key);
      return store.get(PolicyKind.BAN, rule, key).thenApply(o -> o.map(EnginePolicies::ban));
    });
  }

  @Override
  public CompletionStage<Boolean> unban(String rule, String key) {
    return checked(() -> {
      checks.validateKey(rule, key);
      return store.remove(PolicyKind.BAN, rule, key).thenApply(had -> {
        cache.apply(null, new PolicyRecord(PolicyKind.BAN, rule, key, "", 0));
        return had;
      });
    });
  }

  @Override
  public CompletionStage<Page<Ban>> bans(String rule, String after, int count) {
    return page(PolicyKind.BAN, rule, after, count, EnginePolicies::ban);
  }

  @Override
  public CompletionStage<Void> addToList(ListKind kind, String rule, String entry) {
    return checked(() -> {
      PolicyKind k = kind(kind);
      checks.validateKey(rule, entry);
      AccessList.parseEntry(entry);
      PolicyCache.RulePolicies p = cache.of(rule);
      if (p != null) {
        java.util.Set<String> held = kind == ListKind.ALLOW ? p.runtimeAllow : p.runtimeDeny;
        if (held.size() >= RuleSet.MAX_LIST_ENTRIES && !held.contains(entry)) {
          throw new IllegalArgumentException("the " + kind.wireName() + " list of rule '" + rule + "' holds "
              + RuleSet.MAX_LIST_ENTRIES + " run-time entries, its maximum");
        }
      }
      PolicyRecord record = new PolicyRecord(k, rule, entry, "", 0);
      cache.checkRoom(record);
      return store.put(record).thenApply(v -> {
        cache.apply(record, null);
        return null;
      });
    });
  }

  @Override
  public CompletionStage<Boolean> removeFromList(ListKind kind, String rule, String entry) {
    return checked(() -> {
      PolicyKind k = kind(kind);
      checks.validateKey(rule, entry);
      return store.remove(k, rule, entry).thenApply(had -> {
        cache.apply(null, new PolicyRecord(k, rule, entry, "", 0));
        return had;
      });
    });
  }

  @Override
  public CompletionStage<Page<String>> list(ListKind kind, String rule, String after, int count) {
    return checked(() -> {
      PolicyKind k = kind(kind);
      if (rule == null) {
        throw new IllegalArgumentException("rule must be given");
      }
      return page(k, rule, after, count, PolicyRecord::key);
    });
  }

  @Override
  public CompletionStage<Page<ListEntry>> lists(ListKind kind, String after, int count) {
    return checked(() -> page(kind(kind), null, after, count, r -> new ListEntry(r.rule(), r.key())));
  }

  @Override
  public CompletionStage<List<String>> audit(String rule, String key) {
    return checked(() -> {
      checks.validateKey(rule, key);
      return store.audit(rule, key);
    });
  }

  @Override
  public CompletionStage<List<Offender>> top(String rule, Duration last, int count) {
    return checked(() -> {
      ruleInForce(rule);
      if (last == null || last.isNegative() || last.toSeconds() % 60 != 0 || last.toNanos() % 1_000_000_000L != 0
          || last.toMinutes() < 1 || last.toMinutes() > 60) {
        throw new IllegalArgumentException("last must be whole minutes, 1 to 60, was " + last);
      }
      pageCount(count);
      if (topOffenders == null) {
        throw new UnsupportedOperationException("the store keeps no denial sketches");
      }
      return topOffenders.top(rule, (int) last.toMinutes(), count);
    });
  }

  /** Refuses windows that the store could not decide for the rule, as if they were the rule's own. */
  private void checkWindows(Rule rule, List<Window> windows) {
    if (windows.isEmpty() || windows.size() > LiveLimit.MAX_WINDOWS) {
      throw new IllegalArgumentException("a live limit has 1 to " + LiveLimit.MAX_WINDOWS + " windows, had "
          + windows.size());
    }
    checks.checkWindows(rule, windows);
  }


  private <T> CompletionStage<Page<T>> page(PolicyKind kind, String rule, String after, int count,
      Function<PolicyRecord, T> map) {
    return checked(() -> {
      if (rule != null) {
        ruleInForce(rule);
      }
      pageCount(count);
      String cursor = rule == null || after == null ? after : rule + ' ' + after;
      return store.page(kind, rule, cursor, count).thenApply(records -> {
        List<T> items = new ArrayList<>(records.size());
        for (PolicyRecord r : records) {
          T t = map.apply(r);
          if (t != null) {
            items.add(t);
          }
        }
        String next = null;
        if (records.size() == count) {
          PolicyRecord last = records.get(records.size() - 1);
          next = rule == null ? last.cursor() : last.key();
        }
        return new Page<>(items, next);
      });
    });
  }

  private void ruleInForce(String rule) {
    if (rule == null || checks.rules().get(rule) == null) {
      throw new UnknownRuleException(String.valueOf(rule));
    }
  }

  private static void pageCount(int count) {
    if (count < 1 || count > MAX_PAGE) {
      throw new IllegalArgumentException("count must be between 1 and " + MAX_PAGE + ", was " + count);
    }
  }

  private static PolicyKind kind(ListKind kind) {
    if (kind == null) {
      throw new IllegalArgumentException("the list must be given: allow or deny");
    }
    return kind == ListKind.ALLOW ? PolicyKind.ALLOW : PolicyKind.DENY;
  }

  private static Ban ban(PolicyRecord r) {
    return new Ban(r.rule(), r.key(), r.expiresAtMillis() == 0 ? Long.MAX_VALUE : r.expiresAtMillis(),
        AUTOMATIC.equals(r.value()));
  }

  private Optional<LiveLimit> decode(PolicyRecord r) {
    try {
      return Optional.of(LiveLimits.decode(r.value()));
    } catch (IllegalArgumentException e) {
      // A listing reads every record of a page: throttled, as the decisions' warnings are.
      cache.warn(PolicyLog.RECORD_UNREADABLE, () -> "a live limit of rule '" + r.rule() + "' is unreadable: "
          + PolicyLog.withoutKey(e.getMessage(), r.key()));
      return Optional.empty();
    }
  }

  /** Runs {@code call}; what it throws completes the stage instead. */
  private static <T> CompletionStage<T> checked(Supplier<CompletionStage<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
