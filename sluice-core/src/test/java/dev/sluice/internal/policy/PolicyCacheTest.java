package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The limiter's cache of a remote store's policies, polled by hand. */
class PolicyCacheTest {

  /** A remote store's policies, as a list, whose change feed says what the test makes it say. */
  static class FakePolicies implements PolicyRecords, DenialSketches, Membership {
    final List<PolicyRecord> records = new ArrayList<>();
    long version;
    PolicyChanges next;
    RuntimeException failure;
    int pages;

    @Override
    public CompletionStage<Long> put(PolicyRecord record) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Boolean> remove(PolicyKind kind, String rule, String key) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<Optional<PolicyRecord>> get(PolicyKind kind, String rule, String key) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletionStage<List<PolicyRecord>> page(PolicyKind kind, String rule, String after, int count) {
      pages++;
      List<PolicyRecord> out = records.stream().filter(r -> r.kind() == kind)
          .filter(r -> after == null || r.cursor().compareTo(after) > 0)
          .sorted(Comparator.comparing(PolicyRecord::cursor)).limit(count).toList();
      return CompletableFuture.completedFuture(out);
    }

    @Override
    public CompletionStage<Long> version() {
      return CompletableFuture.completedFuture(version);
    }

    @Override
    public CompletionStage<PolicyChanges> changesSince(long v) {
      if (failure != null) {
        return CompletableFuture.failedFuture(failure);
      }
      return CompletableFuture.completedFuture(next != null ? next : new PolicyChanges(version, true, List.of(),
          List.of()));
    }

    @Override
    public CompletionStage<List<String>> audit(String rule, String key) {
      return CompletableFuture.completedFuture(List.of());
    }

    @Override
    public CompletionStage<Void> addDenials(String rule, long minute, String sketch) {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<List<String>> denials(String rule, long from, long to) {
      return CompletableFuture.completedFuture(List.of());
    }

    @Override
    public CompletionStage<Integer> heartbeat(String instance, long ttlMillis) {
      return CompletableFuture.completedFuture(1);
    }

    @Override
    public CompletionStage<Void> leave(String instance) {
      return CompletableFuture.completedFuture(null);
    }
  }

  final RuleSet rules = RuleSet.of(Rule.builder("r").window(5, Duration.ofMinutes(1)).build())
      .withList(ListKind.ALLOW, Map.of("r", List.of("ops:*")));
  final FakePolicies store = new FakePolicies();

  static PolicyRecord limit(String key, String value) {
    return new PolicyRecord(PolicyKind.LIMIT, "r", key, value, 0);
  }

  @Test
  void anIncompleteChangeFeedMakesTheCacheReadEverythingAgain() {
    store.records.add(limit("a", "tier:gold"));
    store.version = 7;
    PolicyCache cache = new PolicyCache(store, false, rules, false);
    cache.pollOnce();
    assertThat(cache.version()).isEqualTo(7);
    assertThat(cache.of("r").limit("a")).isEqualTo(LiveLimit.tier("gold"));

    store.records.clear();
    store.records.add(limit("b", "3/PT1M"));
    store.version = 20_000;
    store.next = new PolicyChanges(20_000, false, List.of(), List.of());
    cache.pollOnce();

    assertThat(cache.version()).isEqualTo(20_000);
    assertThat(cache.of("r").limit("a")).isNull();
    assertThat(cache.of("r").limit("b")).isEqualTo(LiveLimit.windows(List.of(Window.of(3, Duration.ofMinutes(1)))));
    assertThat(cache.of("r").allows("ops:1")).as("configured list kept").isTrue();
  }

  @Test
  void aFailingReadKeepsThePoliciesAsLastReadAndIsRetried() {
    store.records.add(limit("a", "tier:gold"));
    store.records.add(new PolicyRecord(PolicyKind.DENY, "r", "bad:*", "", 0));
    store.version = 2;
    PolicyCache cache = new PolicyCache(store, false, rules, false);
    cache.pollOnce();

    store.failure = new IllegalStateException("connection reset");
    cache.pollOnce();
    assertThat(cache.version()).isEqualTo(2);
    assertThat(cache.of("r").limit("a")).isEqualTo(LiveLimit.tier("gold"));
    assertThat(cache.of("r").denies("bad:x")).isTrue();

    store.failure = null;
    store.version = 3;
    store.next = new PolicyChanges(3, true, List.of(), List.of(new PolicyRecord(PolicyKind.DENY, "r", "bad:*", "",
        0)));
    cache.pollOnce();
    assertThat(cache.version()).isEqualTo(3);
    assertThat(cache.of("r").denies("bad:x")).isFalse();
  }

  @Test
  void aChangeAppliedByThisLimiterIsNotUndoneByAReadMadeBeforeIt() {
    store.version = 1;
    PolicyCache cache = new PolicyCache(store, false, rules, false);
    cache.pollOnce();
    cache.apply(limit("a", "tier:gold"), null);
    // A read that started before the change: the store had no limit for "a" then, but its feed
    // names it (an older put and remove).
    store.next = new PolicyChanges(2, true, List.of(), List.of(limit("a", "")));
    // Simulates that read's answer arriving after the local change: it is dropped.
    cache.applyRead(store.next, 0);
    assertThat(cache.of("r").limit("a")).isEqualTo(LiveLimit.tier("gold"));
    assertThat(cache.version()).isEqualTo(1);
  }

  @Test
  void noPoliciesCostsNoLookup() {
    PolicyCache cache = new PolicyCache(store, false, RuleSet.of(Rule.builder("r").window(1, Duration.ofSeconds(1))
        .build()), false);
    cache.pollOnce();
    assertThat(cache.current()).isNull();
  }
}
