package dev.sluice;

import dev.sluice.policy.Ban;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.ListEntry;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.Offender;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Page;
import dev.sluice.policy.Policies;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Live limits, bans and access lists through {@link RateLimiter#policies()} on the memory store. */
class PoliciesMemoryTest {
  final FakeTicker ticker = new FakeTicker();
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();
  final Rule perUser = Rule.builder("per_user").window(5, Duration.ofMinutes(1)).build();
  final Rule perIp = Rule.builder("per_ip").window(3, Duration.ofMinutes(1)).build();
  final Rule leaky = Rule.builder("leaky").algorithm(Algorithm.LEAKY_BUCKET).window(2, Duration.ofSeconds(1))
      .maxWait(Duration.ZERO).build();
  final RuleSet rules = RuleSet.of(perUser, perIp, leaky)
      .withTiers(Map.of("premium", List.of(Window.of(10, Duration.ofMinutes(1))),
          "tiny", List.of(Window.of(1, Duration.ofMinutes(1)))))
      .withList(ListKind.DENY, Map.of("per_ip", List.of("ip:192.0.2.0/24")))
      .withList(ListKind.ALLOW, Map.of("per_ip", List.of("ip:office")));
  final RateLimiter limiter = limiter();
  final Policies policies = limiter.policies();

  RateLimiter limiter() {
    return Sluice.builder().rules(rules).store(store).ticker(ticker).sleeper(ticker).build();
  }

  @AfterEach
  void close() {
    limiter.close();
  }

  static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  static Throwable failure(CompletionStage<?> s) {
    try {
      s.toCompletableFuture().join();
    } catch (CompletionException e) {
      return e.getCause();
    }
    throw new AssertionError("the stage did not fail");
  }

  int admitted(String rule, String key, int tries) {
    int n = 0;
    for (int i = 0; i < tries; i++) {
      if (limiter.acquire(rule, key).allowed()) {
        n++;
      }
    }
    return n;
  }

  @Test
  void aLiveLimitIsSetReadRemovedAndApplied() {
    join(policies.setLimit("per_user", "alice", LiveLimit.tier("premium")));
    assertThat(join(policies.limit("per_user", "alice"))).contains(LiveLimit.tier("premium"));
    assertThat(admitted("per_user", "alice", 12)).isEqualTo(10);
    assertThat(admitted("per_user", "bob", 12)).isEqualTo(5);

    assertThat(join(policies.removeLimit("per_user", "alice"))).isTrue();
    assertThat(join(policies.removeLimit("per_user", "alice"))).isFalse();
    assertThat(join(policies.limit("per_user", "alice"))).isEmpty();
    join(limiter.reset("per_user", "alice"));
    assertThat(admitted("per_user", "alice", 12)).isEqualTo(5);
  }

  @Test
  void aLiveLimitOfItsOwnWindowsIsApplied() {
    join(policies.setLimit("per_user", "carol", LiveLimit.windows(List.of(Window.of(2, Duration.ofMinutes(1))))));
    assertThat(join(policies.limit("per_user", "carol")))
        .contains(LiveLimit.windows(List.of(Window.of(2, Duration.ofMinutes(1)))));
    assertThat(admitted("per_user", "carol", 5)).isEqualTo(2);
  }

  @Test
  void liveLimitsAreListedInKeyOrderPageByPage() {
    for (String k : List.of("d", "a", "c", "b", "e")) {
      join(policies.setLimit("per_user", k, LiveLimit.tier("premium")));
    }
    join(policies.setLimit("per_ip", "ip:1", LiveLimit.tier("tiny")));
    Page<KeyLimit> first = join(policies.limits("per_user", null, 2));
    assertThat(first.items()).extracting(KeyLimit::key).containsExactly("a", "b");
    Page<KeyLimit> second = join(policies.limits("per_user", first.next(), 2));
    assertThat(second.items()).extracting(KeyLimit::key).containsExactly("c", "d");
    Page<KeyLimit> third = join(policies.limits("per_user", second.next(), 2));
    assertThat(third.items()).extracting(KeyLimit::key).containsExactly("e");
    assertThat(third.next()).isNull();

    List<String> all = new ArrayList<>();
    String after = null;
    do {
      Page<KeyLimit> p = join(policies.limits(null, after, 4));
      p.items().forEach(l -> all.add(l.rule() + "/" + l.key()));
      after = p.next();
    } while (after != null);
    assertThat(all).containsExactly("per_ip/ip:1", "per_user/a", "per_user/b", "per_user/c", "per_user/d",
        "per_user/e");
  }

  @Test
  void aKeyAtFourOfFiveMovedToATenTierHasSixLeft() {
    assertThat(admitted("per_user", "dave", 4)).isEqualTo(4);
    join(policies.setLimit("per_user", "dave", LiveLimit.tier("premium")));
    Decision d = limiter.acquire(Request.of("per_user", "dave", 0));
    assertThat(d.items().get(0).windows().get(0).limit()).isEqualTo(10);
    assertThat(d.items().get(0).windows().get(0).remaining()).isEqualTo(6);
    assertThat(admitted("per_user", "dave", 10)).isEqualTo(6);
  }

  @Test
  void aNetworkKeyWhoseEveryAddressIsDenyListedIsDeniedThoughIpv4AndIpv6EntriesHoldItTogether() {
    // ::fffe:0:0/95 is ::fffe:0:0/96, then every IPv4-mapped address.
    join(policies.addToList(ListKind.DENY, "per_ip", "ip:0.0.0.0/0"));
    join(policies.addToList(ListKind.DENY, "per_ip", "ip:::fffe:0:0/96"));
    assertThat(limiter.acquire("per_ip", "ip:::fffe:0:0/95").items().get(0).reason())
        .isEqualTo(DenyReason.DENY_LISTED);
    assertThat(limiter.acquire("per_ip", "ip:::fffc:0:0/94").allowed()).isTrue();
  }

  @Test
  void theDenyListDeniesWithoutConsumingAndTheAllowListAdmitsWithoutLimit() {
    join(policies.addToList(ListKind.DENY, "per_ip", "ip:10.0.0.0/8"));
    join(policies.addToList(ListKind.DENY, "per_ip", "ip:2001:db8::/32"));
    join(policies.addToList(ListKind.ALLOW, "per_ip", "ip:203.0.113.7"));

    Decision denied = limiter.acquire(Request.of(Item.of("per_user", "u1"), Item.of("per_ip", "ip:10.1.2.3")));
    assertThat(denied.allowed()).isFalse();
    ItemDecision ipItem = denied.items().get(1);
    assertThat(ipItem.reason()).isEqualTo(DenyReason.DENY_LISTED);
    assertThat(ipItem.retryAfterMs()).isEqualTo(WindowState.NEVER);
    assertThat(ipItem.windows()).isEmpty();
    assertThat(denied.items().get(0).allowed()).isTrue();
    assertThat(denied.items().get(0).windows()).isEmpty();
    // Nothing of the request was consumed.
    assertThat(admitted("per_user", "u1", 6)).isEqualTo(5);

    assertThat(limiter.acquire("per_ip", "ip:2001:db8:1::5").items().get(0).reason())
        .isEqualTo(DenyReason.DENY_LISTED);
    assertThat(limiter.acquire("per_ip", "ip:192.0.2.9").items().get(0).reason())
        .as("configured CIDR").isEqualTo(DenyReason.DENY_LISTED);
    assertThat(limiter.acquire("per_ip", "ip:11.0.0.1").allowed()).isTrue();
    assertThat(limiter.acquire("per_ip", "ip:2001:db9::1").allowed()).isTrue();

    assertThat(admitted("per_ip", "ip:203.0.113.7", 50)).isEqualTo(50);
    assertThat(admitted("per_ip", "ip:office", 50)).as("configured").isEqualTo(50);
    assertThat(limiter.acquire("per_ip", "ip:203.0.113.7").items().get(0).windows()).isEmpty();

    assertThat(join(policies.list(ListKind.DENY, "per_ip", null, 10)))
        .isEqualTo(new Page<>(List.of("ip:10.0.0.0/8", "ip:2001:db8::/32"), null));
    // Every rule's entries of a kind, by rule then entry, paged.
    join(policies.addToList(ListKind.DENY, "per_user", "mallory"));
    assertThat(join(policies.lists(ListKind.DENY, null, 10)).items()).containsExactly(
        new ListEntry("per_ip", "ip:10.0.0.0/8"), new ListEntry("per_ip", "ip:2001:db8::/32"),
        new ListEntry("per_user", "mallory"));
    Page<ListEntry> first = join(policies.lists(ListKind.DENY, null, 2));
    assertThat(join(policies.lists(ListKind.DENY, first.next(), 2)))
        .isEqualTo(new Page<>(List.of(new ListEntry("per_user", "mallory")), null));
    assertThat(join(policies.lists(ListKind.ALLOW, null, 10)).items()).doesNotContain(new ListEntry("per_user", "mallory"));
    assertThat(join(policies.removeFromList(ListKind.DENY, "per_user", "mallory"))).isTrue();
    assertThat(join(policies.removeFromList(ListKind.DENY, "per_ip", "ip:10.0.0.0/8"))).isTrue();
    assertThat(limiter.acquire("per_ip", "ip:10.1.2.3").allowed()).isTrue();
  }

  @Test
  void theBooleanPathsApplyListsToo() {
    join(policies.addToList(ListKind.DENY, "per_user", "mallory"));
    assertThat(limiter.tryAcquire("per_user", "mallory")).isFalse();
    assertThat(join(limiter.tryAcquireAsync("per_user", "mallory"))).isFalse();
    assertThat(limiter.tryAcquire("per_user", "eve")).isTrue();
  }

  @Test
  void aManualBanDeniesUntilItsExpiryAndCanBeLifted() {
    Instant until = Instant.ofEpochMilli(ticker.nowMicros() / 1000 + 60_000);
    join(policies.ban("per_user", "eve", until));
    Decision d = limiter.acquire("per_user", "eve");
    assertThat(d.allowed()).isFalse();
    assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(d.retryAfterMs()).isEqualTo(60_000);
    assertThat(join(policies.ban("per_user", "eve")))
        .contains(new Ban("per_user", "eve", until.toEpochMilli(), false));
    assertThat(join(policies.bans(null, null, 10)).items()).extracting(Ban::key).containsExactly("eve");

    ticker.advance(Duration.ofSeconds(59));
    assertThat(limiter.acquire("per_user", "eve").retryAfterMs()).isEqualTo(1000);
    ticker.advance(Duration.ofSeconds(1));
    assertThat(limiter.acquire("per_user", "eve").allowed()).isTrue();
    assertThat(join(policies.ban("per_user", "eve"))).isEmpty();

    join(policies.ban("per_user", "eve", Instant.ofEpochMilli(ticker.nowMicros() / 1000 + 60_000)));
    assertThat(limiter.acquire("per_user", "eve").allowed()).isFalse();
    assertThat(join(policies.unban("per_user", "eve"))).isTrue();
    assertThat(limiter.acquire("per_user", "eve").allowed()).isTrue();
    assertThat(join(policies.unban("per_user", "eve"))).isFalse();
  }

  @Test
  void aChangeThroughOneLimiterIsAppliedByAnotherOnTheSameStore() {
    try (RateLimiter other = limiter()) {
      assertThat(other.acquire("per_user", "zed").allowed()).isTrue();
      join(policies.addToList(ListKind.DENY, "per_user", "zed"));
      assertThat(other.acquire("per_user", "zed").items().get(0).reason()).isEqualTo(DenyReason.DENY_LISTED);
      join(policies.setLimit("per_user", "yan", LiveLimit.tier("tiny")));
      assertThat(other.acquire("per_user", "yan").allowed()).isTrue();
      assertThat(other.acquire("per_user", "yan").allowed()).isFalse();
    }
  }

  @Test
  void topOffendersCountTheDenialsOfEveryKindOfCall() {
    assertThat(admitted("per_user", "ann", 5)).isEqualTo(5);
    // The explaining calls, by rule and by request, and the boolean ones, which build no decision.
    assertThat(limiter.acquire("per_user", "ann").allowed()).isFalse();
    assertThat(limiter.acquire(Request.of("per_user", "ann")).allowed()).isFalse();
    assertThat(limiter.tryAcquire("per_user", "ann")).isFalse();
    assertThat(join(limiter.tryAcquireAsync("per_user", "ann", 1))).isFalse();
    assertThat(join(limiter.acquireAsync(Request.of("per_user", "ann"))).allowed()).isFalse();
    assertThat(admitted("per_user", "bob", 6)).isEqualTo(5);
    assertThat(join(policies.top("per_user", Duration.ofMinutes(1), 10)))
        .containsExactly(new Offender("ann", 5, 0), new Offender("bob", 1, 0));
  }

  @Test
  void badInputsAreRefusedNamingWhatIsWrongAndChangeNothing() {
    assertThat(failure(policies.setLimit("nope", "k", LiveLimit.tier("premium"))))
        .isInstanceOf(UnknownRuleException.class);
    assertThat(failure(policies.setLimit("per_user", "", LiveLimit.tier("premium"))))
        .isInstanceOf(InvalidKeyException.class);
    assertThat(failure(policies.setLimit("per_user", "k", LiveLimit.tier("gold"))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tier 'gold'");
    assertThat(failure(policies.setLimit("per_user", "k",
        LiveLimit.windows(List.of(Window.of(Long.MAX_VALUE, Duration.ofNanos(1000)))))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(failure(policies.ban("per_user", "k", Instant.ofEpochMilli(ticker.nowMicros() / 1000))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("until must be in the future");
    assertThat(failure(policies.addToList(ListKind.DENY, "per_ip", "ip:10.0.0.0/33")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CIDR prefix /33");
    assertThat(failure(policies.addToList(ListKind.DENY, "per_ip", "a*b")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'*'");
    assertThat(failure(policies.limits("per_user", null, 0))).hasMessageContaining("count");
    assertThat(failure(policies.limits("per_user", null, 1001))).hasMessageContaining("count");
    assertThat(failure(policies.top("per_user", Duration.ofSeconds(90), 10))).hasMessageContaining("whole minutes");

    assertThat(store.policies().size()).isZero();
    assertThat(join(store.policies().version())).isZero();
    assertThat(admitted("per_user", "k", 6)).isEqualTo(5);
  }

  @Test
  void manyThreadsDecideWhilePoliciesChange() throws Exception {
    int threads = 4;
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> inconsistent = new ConcurrentLinkedQueue<>();
    CountDownLatch done = new CountDownLatch(threads);
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread th = new Thread(() -> {
        try {
          int i = 0;
          while (!stop.get()) {
            String key = "k" + (i++ % 8);
            Decision d = limiter.acquire(Request.of(Item.of("per_user", key), Item.of("per_ip", "ip:" + id)));
            ItemDecision u = d.items().get(0);
            // Some policy in force: denied by the list, admitted by the allow list, or decided by
            // the store under the rule's windows or the tier's.
            boolean ok = switch (u.reason()) {
              case DENY_LISTED -> !u.allowed() && u.windows().isEmpty();
              case BANNED -> !u.allowed() && u.retryAfterMs() > 0;
              case NONE, LIMIT_EXCEEDED -> u.windows().isEmpty()
                  || List.of(5L, 10L).contains(u.windows().get(0).limit());
              default -> false;
            };
            if (!ok) {
              inconsistent.add(u.toString());
            }
          }
        } catch (Throwable e) {
          errors.add(e);
        } finally {
          done.countDown();
        }
      });
      th.setDaemon(true);
      th.start();
    }
    for (int i = 0; i < 300; i++) {
      String key = "k" + (i % 8);
      switch (i % 6) {
        case 0 -> join(policies.setLimit("per_user", key, LiveLimit.tier("premium")));
        case 1 -> join(policies.addToList(ListKind.DENY, "per_user", key));
        case 2 -> join(policies.ban("per_user", key, Instant.ofEpochMilli(ticker.nowMicros() / 1000 + 1000)));
        case 3 -> join(policies.removeFromList(ListKind.DENY, "per_user", key));
        case 4 -> join(policies.unban("per_user", key));
        default -> join(policies.removeLimit("per_user", key));
      }
      if (i % 50 == 0) {
        ticker.advance(Duration.ofMinutes(1));
      }
    }
    stop.set(true);
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(errors).isEmpty();
    assertThat(inconsistent).isEmpty();
    // Once changes stop, every decision follows the policies in the store.
    List<String> denied = join(policies.list(ListKind.DENY, "per_user", null, 100)).items();
    List<String> banned = join(policies.bans("per_user", null, 100)).items().stream().map(Ban::key).toList();
    for (int i = 0; i < 8; i++) {
      String key = "k" + i;
      DenyReason expected = denied.contains(key) ? DenyReason.DENY_LISTED
          : banned.contains(key) ? DenyReason.BANNED : null;
      ItemDecision d = limiter.acquire(Request.of("per_user", key, 0)).items().get(0);
      if (expected != null) {
        assertThat(d.reason()).as(key).isEqualTo(expected);
      } else {
        assertThat(d.reason()).as(key).isNotIn(DenyReason.DENY_LISTED, DenyReason.BANNED);
      }
    }
  }

  @Test
  void anItemsOwnWindowsWinOverTheKeysLiveLimit() {
    join(policies.setLimit("per_user", "fay", LiveLimit.tier("premium")));
    Item own = new Item("per_user", "fay", 1, List.of(Window.of(2, Duration.ofMinutes(1))));
    int n = 0;
    for (int i = 0; i < 5; i++) {
      if (limiter.acquire(Request.of(own)).allowed()) {
        n++;
      }
    }
    assertThat(n).isEqualTo(2);
  }

  @Test
  void aShadowRulesDenyListReportsButDoesNotDeny() {
    Rule watch = Rule.builder("watch").window(100, Duration.ofMinutes(1)).shadow(true).build();
    try (RateLimiter l = Sluice.builder().rules(RuleSet.of(perUser, watch)
        .withList(ListKind.DENY, Map.of("watch", List.of("bot:*")))).ticker(ticker).build()) {
      Decision d = l.acquire(Request.of(Item.of("per_user", "bot:1"), Item.of("watch", "bot:1")));
      assertThat(d.allowed()).isTrue();
      assertThat(d.shadowDenied()).isTrue();
      assertThat(d.items().get(1).reason()).isEqualTo(DenyReason.DENY_LISTED);
      assertThat(d.items().get(0).windows().get(0).remaining()).as("the enforced item was decided").isEqualTo(4);
    }
  }

  @Test
  void aLeakyBucketLiveLimitIsCheckedAsTheRuleIs() {
    join(policies.setLimit("leaky", "k", LiveLimit.windows(List.of(Window.of(4, Duration.ofSeconds(1))))));
    assertThat(join(policies.limit("leaky", "k"))).isEqualTo(Optional.of(
        LiveLimit.windows(List.of(Window.of(4, Duration.ofSeconds(1))))));
  }
}
