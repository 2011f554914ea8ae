package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The denial cache of a remote store, on a memory store made to look remote (not local, calls
 * counted), the limiter and the store on one fake clock.
 */
class DenialCacheTest {
  private final FakeTicker ticker = new FakeTicker(1_700_000_000_000_000L);
  private final FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(ticker).build());
  private final List<String> cached = new ArrayList<>();
  private RateLimiter limiter;

  private static final Rule TWO_PER_10S = Rule.builder("login").window(2, Duration.ofSeconds(10)).build();
  private static final Rule GLOBAL = Rule.builder("global").window(1000, Duration.ofSeconds(10)).build();

  private RateLimiter limiter(Rule... rules) {
    limiter = Sluice.builder().rules(rules).store(store).ticker(ticker)
        .listener(new DecisionListener() {
          @Override
          public void onCachedDenial(String rule, String key) {
            cached.add(rule + "/" + key);
          }
        }).build();
    return limiter;
  }

  @AfterEach
  void close() {
    if (limiter != null) {
      limiter.close();
    }
  }

  @Test
  void aDeniedKeyIsDeniedAgainWithoutAStoreCallUntilJustBeforeItsRetryTime() {
    RateLimiter l = limiter(TWO_PER_10S);
    l.acquire(Request.of("login", "k"));
    ticker.advanceMillis(4_000);
    l.acquire(Request.of("login", "k"));
    Decision first = l.acquire(Request.of("login", "k"));
    assertThat(first.allowed()).isFalse();
    assertThat(first.retryAfterMs()).isEqualTo(6_000); // the first unit leaves at t = 10 s
    int calls = store.decideCalls();

    ticker.advanceMillis(2_500);
    Decision again = l.acquire(Request.of("login", "k"));
    assertThat(again.allowed()).isFalse();
    assertThat(again.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(again.retryAfterMs()).isEqualTo(3_500); // counted down
    assertThat(again.items().get(0).windows().get(0).exceeded()).isTrue();
    assertThat(store.decideCalls()).isEqualTo(calls);
    assertThat(cached).containsExactly("login/k");

    // The entry holds until 1 ms before the retry time; from there the store decides (and still
    // denies, for 1 ms more).
    ticker.advanceMillis(3_499 - 1);
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
    ticker.advanceMillis(1);
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls + 1);
    ticker.advanceMillis(1);
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isTrue();
  }

  @Test
  void otherKeysCostsBelowTheDeniedOneAndPeeksStillGoToTheStore() {
    RateLimiter l = limiter(Rule.builder("login").window(5, Duration.ofSeconds(10)).build());
    l.acquire(Request.of("login", "k", 3));
    assertThat(l.acquire(Request.of("login", "k", 3)).allowed()).isFalse(); // 2 left: 3 is kept as denied
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("login", "k", 4)).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);

    assertThat(l.acquire(Request.of("login", "k", 0)).items().get(0).windows().get(0).remaining()).isEqualTo(2);
    assertThat(l.acquire(Request.of("login", "k", 2)).allowed()).isTrue();
    assertThat(l.acquire(Request.of("login", "other")).allowed()).isTrue();
    assertThat(store.decideCalls()).isEqualTo(calls + 3);
  }

  @Test
  void aRequestWithACachedItemIsDeniedWholeAndConsumesNothingElsewhere() {
    RateLimiter l = limiter(TWO_PER_10S, GLOBAL);
    l.acquire(Request.of("login", "k", 2));
    Request both = Request.of(Item.of("login", "k"), Item.of("global", "all"));
    assertThat(l.acquire(both).allowed()).isFalse();
    int calls = store.decideCalls();

    Decision d = l.acquire(both);
    assertThat(d.allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
    assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    // The other item was not evaluated: reported allowed, with no windows.
    assertThat(d.items().get(1).allowed()).isTrue();
    assertThat(d.items().get(1).windows()).isEmpty();
    assertThat(l.acquire(Request.of("global", "all", 0)).items().get(0).windows().get(0).remaining()).isEqualTo(1000);
  }

  @Test
  void aResetThroughThisLimiterEndsTheCachedDenial() {
    RateLimiter l = limiter(TWO_PER_10S);
    l.acquire(Request.of("login", "k", 2));
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    l.reset("login", "k").toCompletableFuture().join();
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isTrue();
  }

  @Test
  void newWindowsForTheKeyEndTheCachedDenial() {
    RateLimiter l = limiter(TWO_PER_10S);
    l.acquire(Request.of("login", "k", 2));
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    int calls = store.decideCalls();
    l.updateRules(RuleSet.of(Rule.builder("login").window(5, Duration.ofSeconds(10)).build()));
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isTrue();
    assertThat(store.decideCalls()).isEqualTo(calls + 1);
  }

  @Test
  void shadowRulesDegradedDecisionsAndRequestsAtAnExplicitTimeAreNotCached() {
    RateLimiter l = limiter(Rule.builder("watch").window(1, Duration.ofSeconds(10)).shadow(true).build(),
        Rule.builder("closed").window(1, Duration.ofSeconds(10)).failureMode(FailureMode.CLOSED).build(),
        TWO_PER_10S);
    l.acquire(Request.of("watch", "k"));
    assertThat(l.acquire(Request.of("watch", "k")).shadowDenied()).isTrue();

    store.mode(FlakyStore.Mode.FAILS);
    assertThat(l.acquire(Request.of("closed", "k")).degraded()).isTrue();
    store.mode(FlakyStore.Mode.UP);

    long t = ticker.nowMicros() / 1000;
    l.acquire(Request.of("login", "x", 2).atMillis(t));
    assertThat(l.acquire(Request.of("login", "x").atMillis(t)).allowed()).isFalse();

    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("watch", "k")).shadowDenied()).isTrue();
    assertThat(l.acquire(Request.of("closed", "k")).allowed()).isTrue();
    assertThat(l.acquire(Request.of("login", "x").atMillis(t)).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls + 3);
    assertThat(cached).isEmpty();
  }

  @Test
  void aRuleThatBansHasEveryDenialCountedByTheStore() {
    store.withPolicies();
    RateLimiter l = limiter(Rule.builder("login").window(1, Duration.ofSeconds(10))
        .ban(new BanPolicy(3, Duration.ofMinutes(1), Duration.ofMinutes(5))).build());
    l.acquire(Request.of("login", "k"));
    for (int i = 0; i < 3; i++) {
      assertThat(l.acquire(Request.of("login", "k")).items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    }
    assertThat(l.acquire(Request.of("login", "k")).items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(cached).isEmpty();
  }

  @Test
  void aRequestWithAnItemOfARuleThatBansIsNotAnsweredFromAnotherItemsKeptDenial() {
    store.withPolicies();
    Rule anonymous = Rule.builder("anonymous").window(1, Duration.ofSeconds(10)).build();
    Rule perIp = Rule.builder("per_ip").window(30, Duration.ofSeconds(10))
        .ban(new BanPolicy(3, Duration.ofMinutes(1), Duration.ofMinutes(5))).build();
    RateLimiter l = limiter(anonymous, perIp);
    Request both = Request.of(Item.of("anonymous", "ip:1"), Item.of("per_ip", "net"));
    assertThat(l.acquire(both).allowed()).isTrue();
    // Kept: a request of `anonymous` alone is answered from the cache.
    assertThat(l.acquire(Request.of("anonymous", "ip:1")).allowed()).isFalse();
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("anonymous", "ip:1")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
    // With the banning item beside it, each request reaches the store, which counts the denials.
    for (int i = 0; i < 3; i++) {
      assertThat(l.acquire(both).items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    }
    assertThat(store.decideCalls()).isEqualTo(calls + 3);
    assertThat(l.acquire(both).items().get(1).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(cached).containsExactly("anonymous/ip:1");
  }

  @Test
  void aDenialThatStillHoldsIsAnsweredWhileTheStoreIsDownAndIsNotDegraded() {
    RateLimiter l = limiter(TWO_PER_10S);
    l.acquire(Request.of("login", "k", 2));
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    store.mode(FlakyStore.Mode.FAILS);
    Decision d = l.acquire(Request.of("login", "k"));
    assertThat(d.allowed()).isFalse();
    assertThat(d.degraded()).isFalse();
    // Another key has no denial kept: its rule's failure mode (open) decides.
    assertThat(l.acquire(Request.of("login", "other")).degraded()).isTrue();
  }

  @Test
  void theAsyncAndBooleanPathsAnswerFromTheCacheToo() {
    // Without listeners: the boolean paths take their own way to the store.
    RateLimiter l = Sluice.builder().rules(TWO_PER_10S).store(store).ticker(ticker).build();
    limiter = l;
    l.acquire(Request.of("login", "k", 2));
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    int calls = store.decideCalls();
    assertThat(l.acquireAsync(Request.of("login", "k")).toCompletableFuture().join().allowed()).isFalse();
    assertThat(l.tryAcquireAsync("login", "k", 1).toCompletableFuture().join()).isFalse();
    assertThat(l.tryAcquire("login", "k")).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
  }

  @Test
  void anAsyncDenialIsKeptAsASynchronousOneIs() {
    RateLimiter l = limiter(TWO_PER_10S);
    l.acquire(Request.of("login", "k", 2));
    CompletableFuture<Decision> denied = l.acquireAsync(Request.of("login", "k")).toCompletableFuture();
    assertThat(denied.join().allowed()).isFalse();
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("login", "k")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
  }

  @Test
  void theCacheCanBeTurnedOffAndTheMemoryStoreKeepsNone() {
    try (RateLimiter off = Sluice.builder().rules(TWO_PER_10S).store(store).ticker(ticker).denialCache(0).build()) {
      off.acquire(Request.of("login", "k", 2));
      off.acquire(Request.of("login", "k"));
      int calls = store.decideCalls();
      assertThat(off.acquire(Request.of("login", "k")).allowed()).isFalse();
      assertThat(store.decideCalls()).isEqualTo(calls + 1);
    }
    try (RateLimiter inMemory = Sluice.builder().rules(TWO_PER_10S).ticker(ticker).listener(new DecisionListener() {
      @Override
      public void onCachedDenial(String rule, String key) {
        cached.add(key);
      }
    }).build()) {
      inMemory.acquire(Request.of("login", "k", 2));
      inMemory.acquire(Request.of("login", "k"));
      inMemory.acquire(Request.of("login", "k"));
      assertThat(cached).isEmpty();
    }
  }

  @Test
  void aFullCacheKeepsNoMoreDenialsUntilSomeHaveEnded() {
    RateLimiter l = Sluice.builder().rules(TWO_PER_10S).store(store).ticker(ticker).denialCache(3).build();
    limiter = l;
    for (int k = 0; k < 5; k++) {
      l.acquire(Request.of("login", "k" + k, 2));
      assertThat(l.acquire(Request.of("login", "k" + k)).allowed()).isFalse();
    }
    int calls = store.decideCalls();
    for (int k = 0; k < 5; k++) {
      assertThat(l.acquire(Request.of("login", "k" + k)).allowed()).isFalse();
    }
    assertThat(store.decideCalls()).isEqualTo(calls + 2); // k3 and k4 found no room
    // Once the kept ones have ended, new denials find room again.
    ticker.advanceMillis(10_000);
    l.acquire(Request.of("login", "n", 2));
    assertThat(l.acquire(Request.of("login", "n")).allowed()).isFalse();
    calls = store.decideCalls();
    assertThat(l.acquire(Request.of("login", "n")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
  }
  @Test
  void aDenialForAnotherReasonIsNotKept() {
    // A store_full denial says when room may free up; a reset of another key frees it sooner, so
    // the store must hear the key's next request.
    FlakyStore full = new FlakyStore(MemoryStore.builder().ticker(ticker).maxKeys(2).build());
    limiter = Sluice.builder().rules(TWO_PER_10S).store(full).ticker(ticker).listener(new DecisionListener() {
      @Override
      public void onCachedDenial(String rule, String key) {
        cached.add(rule + "/" + key);
      }
    }).build();
    assertThat(limiter.acquire(Request.of("login", "a")).allowed()).isTrue();
    assertThat(limiter.acquire(Request.of("login", "b")).allowed()).isTrue();
    Decision denied = limiter.acquire(Request.of("login", "c"));
    assertThat(denied.items().get(0).reason()).isEqualTo(DenyReason.STORE_FULL);
    assertThat(denied.retryAfterMs()).isGreaterThan(1);

    limiter.reset("login", "a").toCompletableFuture().join();
    int calls = full.decideCalls();
    assertThat(limiter.acquire(Request.of("login", "c")).allowed()).isTrue();
    assertThat(full.decideCalls()).isEqualTo(calls + 1);
    assertThat(cached).isEmpty();
  }

  @Test
  void aDenialForAWaitBeyondMaxWaitIsKept() {
    RateLimiter l = limiter(Rule.builder("shaped").algorithm(Algorithm.LEAKY_BUCKET).window(1, Duration.ofSeconds(10))
        .maxWait(Duration.ZERO).build());
    assertThat(l.acquire(Request.of("shaped", "k")).allowed()).isTrue();
    Decision denied = l.acquire(Request.of("shaped", "k"));
    assertThat(denied.items().get(0).reason()).isEqualTo(DenyReason.WAIT_EXCEEDS_MAX_WAIT);
    int calls = store.decideCalls();

    ticker.advanceMillis(1_000);
    Decision again = l.acquire(Request.of("shaped", "k"));
    assertThat(again.items().get(0).reason()).isEqualTo(DenyReason.WAIT_EXCEEDS_MAX_WAIT);
    assertThat(again.retryAfterMs()).isEqualTo(denied.retryAfterMs() - 1_000);
    assertThat(store.decideCalls()).isEqualTo(calls);
    assertThat(cached).containsExactly("shaped/k");
  }

  @Test
  void aDenialThatEndsWithinAMillisecondTakesNoRoomFromOthers() {
    // One slot. Fixed windows start at multiples of their period since the epoch, as the clock
    // does for 10 s but not for an hour.
    RateLimiter l = Sluice.builder().rules(
        Rule.builder("fixed").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofSeconds(10)).build(),
        Rule.builder("hourly").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofHours(1)).build())
        .store(store).ticker(ticker).denialCache(1).build();
    limiter = l;
    ticker.advanceMillis(9_999);
    // The slot is taken, swept for room, and freed: the next sweep is 100 ms away.
    l.acquire(Request.of("hourly", "x"));
    assertThat(l.acquire(Request.of("hourly", "x")).allowed()).isFalse();
    l.acquire(Request.of("hourly", "y"));
    assertThat(l.acquire(Request.of("hourly", "y")).allowed()).isFalse();
    l.reset("hourly", "x").toCompletableFuture().join();

    l.acquire(Request.of("fixed", "short"));
    assertThat(l.acquire(Request.of("fixed", "short")).retryAfterMs()).isEqualTo(1);
    l.acquire(Request.of("hourly", "long"));
    assertThat(l.acquire(Request.of("hourly", "long")).retryAfterMs()).isGreaterThan(1_000);

    // The denial of "long" got the slot: its next request is answered here.
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("hourly", "long")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
  }
  @Test
  void aCachedDenialReportsEachWindowCountedDownAsTheStoreWould() {
    RateLimiter l = limiter(Rule.builder("login").window(1, Duration.ofSeconds(1)).window(2, Duration.ofSeconds(10))
        .window(100, Duration.ofMinutes(1)).build());
    l.acquire(Request.of("login", "k"));
    ticker.advanceMillis(1_000);
    l.acquire(Request.of("login", "k"));
    ItemDecision first = l.acquire(Request.of("login", "k")).items().get(0);
    assertThat(first.windows()).extracting(WindowState::exceeded).containsExactly(true, true, false);
    assertThat(first.windows()).extracting(WindowState::retryAfterMs).containsExactly(1_000L, 9_000L, 0L);

    ticker.advanceMillis(1_500);
    int calls = store.decideCalls();
    ItemDecision cached = l.acquire(Request.of("login", "k")).items().get(0);
    assertThat(store.decideCalls()).isEqualTo(calls);
    // The one-second window has room again; the ten-second one holds the denial.
    assertThat(cached.windows()).extracting(WindowState::exceeded).containsExactly(false, true, false);
    assertThat(cached.windows()).extracting(WindowState::retryAfterMs).containsExactly(0L, 7_500L, 0L);
    assertThat(cached.retryAfterMs()).isEqualTo(7_500);
    ItemDecision peek = l.acquire(Request.of("login", "k", 0)).items().get(0);
    assertThat(cached.windows()).extracting(WindowState::resetAfterMs)
        .isEqualTo(peek.windows().stream().map(WindowState::resetAfterMs).toList());
    assertThat(cached.windows()).extracting(WindowState::resetAfterMs).containsExactly(0L, 8_500L, 58_500L);
  }
  @Test
  void aResetFreesTheRoomItsDenialTook() {
    RateLimiter l = Sluice.builder().rules(TWO_PER_10S).store(store).ticker(ticker).denialCache(1).build();
    limiter = l;
    l.acquire(Request.of("login", "a", 2));
    assertThat(l.acquire(Request.of("login", "a")).allowed()).isFalse();
    l.reset("login", "a").toCompletableFuture().join();

    l.acquire(Request.of("login", "b", 2));
    assertThat(l.acquire(Request.of("login", "b")).allowed()).isFalse();
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("login", "b")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
  }

  @Test
  void aDenialThatEndsAsAnotherIsLearnedMakesRoomForIt() {
    RateLimiter l = Sluice.builder().rules(TWO_PER_10S).store(store).ticker(ticker).denialCache(1).build();
    limiter = l;
    l.acquire(Request.of("login", "a", 2));
    assertThat(l.acquire(Request.of("login", "a")).retryAfterMs()).isEqualTo(10_000);

    // a's denial holds until 1 ms before its retry time: b's comes just then.
    ticker.advanceMillis(9_999);
    l.acquire(Request.of("login", "b", 2));
    assertThat(l.acquire(Request.of("login", "b")).allowed()).isFalse();
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("login", "b")).allowed()).isFalse();
    assertThat(store.decideCalls()).isEqualTo(calls);
  }
  @Test
  void aFullCacheLooksForEndedDenialsAtMostEvery100Ms() {
    RateLimiter l = Sluice.builder().rules(
        Rule.builder("fixed").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofSeconds(10)).build(),
        Rule.builder("hourly").algorithm(Algorithm.FIXED_WINDOW).window(1, Duration.ofHours(1)).build())
        .store(store).ticker(ticker).denialCache(1).build();
    limiter = l;
    // A denial that ends 50 ms from now takes the one slot; the next one looks for room in vain.
    ticker.advanceMillis(9_950);
    l.acquire(Request.of("fixed", "s"));
    assertThat(l.acquire(Request.of("fixed", "s")).retryAfterMs()).isEqualTo(50);
    assertThat(deniedAndKept(l, "y")).isFalse();

    // The slot's denial has ended, but the last look was 60 ms ago.
    ticker.advanceMillis(60);
    assertThat(deniedAndKept(l, "z")).isFalse();
    ticker.advanceMillis(40);
    assertThat(deniedAndKept(l, "w")).isTrue();
  }

  /** Whether {@code key}'s denial under "hourly" is answered without the store afterwards. */
  private boolean deniedAndKept(RateLimiter l, String key) {
    l.acquire(Request.of("hourly", key));
    assertThat(l.acquire(Request.of("hourly", key)).allowed()).isFalse();
    int calls = store.decideCalls();
    assertThat(l.acquire(Request.of("hourly", key)).allowed()).isFalse();
    return store.decideCalls() == calls;
  }
}
