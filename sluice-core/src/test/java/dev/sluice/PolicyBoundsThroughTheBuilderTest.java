package dev.sluice;

import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyFullException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Policy records are bounded by bytes on the memory store, as a user meets it: a limiter from
 * {@code Sluice.builder()} on a memory store with a small byte budget, policies set through
 * {@link RateLimiter#policies()}. Live limits of 512-byte keys and 16 windows once filled the heap
 * (70,401 of them killed a 192 MB service): only their count was bounded, at 1,000,000.
 */
class PolicyBoundsThroughTheBuilderTest {
  /** The store's bytes; its policy records may hold a quarter: 100,000 bytes. */
  static final long STORE_BYTES = 400_000;

  final FakeTicker ticker = new FakeTicker();
  final MemoryStore store = MemoryStore.builder().ticker(ticker).maxBytes(STORE_BYTES).build();
  final RateLimiter limiter = Sluice.builder().store(store).ticker(ticker).sleeper(ticker)
      .rules(Rule.builder("api").window(5, Duration.ofMinutes(1)).build()).build();
  final Policies policies = limiter.policies();

  @AfterEach
  void close() {
    limiter.close();
    store.close();
  }

  static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  /** A 512-byte key. */
  static String key(int i) {
    String head = "user:" + i + ":";
    return head + "x".repeat(512 - head.length());
  }

  /** 16 windows: 1 per minute, 2 per 2 minutes, ... */
  static LiveLimit sixteenWindows() {
    List<Window> ws = new ArrayList<>();
    for (int i = 1; i <= 16; i++) {
      ws.add(new Window(i, Duration.ofMinutes(i)));
    }
    return LiveLimit.windows(ws);
  }

  /** Sets live limits on new keys until one is refused; returns how many were set. */
  int fillWithLimits() {
    for (int i = 0; i < 10_000; i++) {
      try {
        join(policies.setLimit("api", key(i), sixteenWindows()));
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(PolicyFullException.class);
        return i;
      }
    }
    throw new AssertionError("10,000 live limits of 512-byte keys were set within a 100,000-byte bound");
  }

  @Test
  void liveLimitsAreRefusedOnceTheirBytesAreFullAndTheErrorNamesTheBound() {
    int set = fillWithLimits();

    // About 3 KB each (the store's copy and the limiter's): some thirty fit in 100,000 bytes.
    assertThat(set).isBetween(15, 60);
    assertThatThrownBy(() -> join(policies.setLimit("api", key(set), sixteenWindows())))
        .cause().isInstanceOf(PolicyFullException.class)
        .hasMessageStartingWith("the memory store's policy records hold ")
        .hasMessageContaining(" of their 100000 bytes (a quarter of the store's bytes, --max-store-bytes)")
        .hasMessageContaining("remove some");
    assertThat(join(policies.limit("api", key(set)))).isEmpty();
    // Bans share the bound: smaller, a few more fit.
    Instant inAnHour = Instant.ofEpochMilli(ticker.nowMicros() / 1000).plus(Duration.ofHours(1));
    int bans = 0;
    while (true) {
      try {
        join(policies.ban("api", key(10_000 + bans), inAnHour));
        bans++;
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(PolicyFullException.class);
        break;
      }
      assertThat(bans).as("bans set past a full bound").isLessThan(10);
    }
    assertThat(join(policies.ban("api", key(10_000 + bans)))).isEmpty();
    assertThat(store.policies().bytes()).isLessThanOrEqualTo(store.policies().maxBytes());
  }

  @Test
  void theLimitsHeldKeepWorkingAndOtherKeysAreDecidedAsBefore() {
    int set = fillWithLimits();

    // A held live limit applies: 1 per minute in its first window.
    assertThat(limiter.acquire("api", key(0)).allowed()).isTrue();
    Decision second = limiter.acquire("api", key(0));
    assertThat(second.allowed()).isFalse();
    assertThat(second.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    // A held one can be replaced by one of the same size, and read back.
    join(policies.setLimit("api", key(1), sixteenWindows()));
    assertThat(join(policies.limit("api", key(1)))).contains(sixteenWindows());
    // Keys without a live limit get the rule's 5.
    for (int i = 0; i < 5; i++) {
      assertThat(limiter.acquire("api", "other").allowed()).isTrue();
    }
    assertThat(limiter.acquire("api", "other").allowed()).isFalse();
    // Removing one makes room for one.
    assertThat(join(policies.removeLimit("api", key(2)))).isTrue();
    join(policies.setLimit("api", key(set), sixteenWindows()));
    assertThat(join(policies.limits("api", null, 1000)).items()).hasSize(set);
  }

  @Test
  void aRecordLargerThanTheWholeBoundIsRefusedAsBadInput() {
    MemoryStore tiny = MemoryStore.builder().ticker(ticker).maxBytes(4_000).build();
    try (RateLimiter l = Sluice.builder().store(tiny).ticker(ticker).maxKeyBytes(4096)
        .rules(Rule.builder("api").window(5, Duration.ofMinutes(1)).build()).build()) {
      assertThatThrownBy(() -> join(l.policies().setLimit("api", "k".repeat(2048), sixteenWindows())))
          .cause().isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("more than all policy records of the memory store may hold (1000 bytes)");
    } finally {
      tiny.close();
    }
  }

  @Test
  void theLimitersCacheOfPoliciesIsBoundedByBytesToo() {
    MemoryStore roomy = MemoryStore.builder().ticker(ticker).maxBytes(STORE_BYTES * 100).build();
    try (RateLimiter l = Sluice.builder().store(roomy).ticker(ticker).maxPolicyBytes(20_000)
        .rules(Rule.builder("api").window(5, Duration.ofMinutes(1)).build()).build()) {
      int i = 0;
      while (i < 1000) {
        try {
          join(l.policies().setLimit("api", key(i), sixteenWindows()));
          i++;
        } catch (CompletionException e) {
          assertThat(e.getCause()).isInstanceOf(PolicyFullException.class)
              .hasMessageStartingWith("this instance's cache of the store's policies holds ")
              .hasMessageContaining(" of its 20000 bytes (an eighth of the maximum heap, -Xmx, unless the library sets Sluice.Builder.maxPolicyBytes)");
          break;
        }
      }
      assertThat(i).isBetween(5, 30);
      // Refused before the store was written.
      assertThat(join(l.policies().limit("api", key(i)))).isEmpty();
      assertThat(l.acquire("api", key(0)).allowed()).isTrue();
      assertThat(l.acquire("api", key(0)).allowed()).isFalse();
    } finally {
      roomy.close();
    }
  }
}
