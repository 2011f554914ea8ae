package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.BanPolicy;
import dev.sluice.DecisionListener;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.PolicyFullException;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import dev.sluice.testing.WarningLines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On a real Redis: each instance's cache of the store's policies is bounded by bytes, and a flood
 * of automatic bans past the store's record cap is logged a few lines at a time, without keys, and
 * counted. The flood once wrote 21,701 WARNING lines quoting 512-byte keys (17 MB), one per ban.
 */
class PolicyBoundsAndLogsRedisTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  final Rule api = Rule.builder("api").window(5, Duration.ofHours(1)).build();
  /** One unit an hour; a key denied once is banned for an hour. */
  final Rule login = Rule.builder("login").window(1, Duration.ofHours(1))
      .ban(new BanPolicy(1, Duration.ofMinutes(1), Duration.ofHours(1))).build();

  final Warnings warnings = new Warnings();
  WarningLines warningLines;
  List<String> lines;
  final List<AutoCloseable> open = new ArrayList<>();
  String prefix;

  /** Counts what the limiter tells its metrics of the policy path. */
  static final class Warnings implements DecisionListener {
    final Map<String, AtomicLong> byKind = new ConcurrentHashMap<>();

    @Override
    public void onPolicyWarning(String kind) {
      byKind.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    }

    long of(String kind) {
      AtomicLong n = byKind.get(kind);
      return n == null ? 0 : n.get();
    }
  }

  @BeforeEach
  void logs() {
    prefix = "b" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    warningLines = WarningLines.of("dev.sluice.internal.policy.PolicyCache");
    lines = warningLines.lines();
  }

  @AfterEach
  void close() throws Exception {
    warningLines.close();
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  static String key(String kind, int i) {
    String head = kind + ":" + i + ":";
    return head + "x".repeat(512 - head.length());
  }

  RateLimiter limiter(RedisStore.Builder store, Sluice.Builder builder) {
    RedisStore s = store.prefix(prefix).build();
    RateLimiter l = builder.rules(api, login).store(s).listener(warnings).build();
    open.add(0, s);
    open.add(0, l);
    return l;
  }

  static LiveLimit sixteenWindows() {
    List<Window> ws = new ArrayList<>();
    for (int i = 1; i <= 16; i++) {
      ws.add(new Window(i, Duration.ofHours(i)));
    }
    return LiveLimit.windows(ws);
  }

  @Test
  void anInstancesCacheOfPoliciesIsBoundedByBytesAndRefusesPutsBeyondBeforeTheStoreIsWritten() throws Exception {
    RateLimiter a = limiter(RedisStore.builder(redis.get().uri()), Sluice.builder().maxPolicyBytes(30_000));
    RateLimiter b = limiter(RedisStore.builder(redis.get().uri()), Sluice.builder());
    int set = 0;
    while (true) {
      try {
        join(a.policies().setLimit("api", key("user", set), sixteenWindows()));
        set++;
      } catch (CompletionException e) {
        assertThat(e.getCause()).isInstanceOf(PolicyFullException.class)
            .hasMessageContaining(" of its 30000 bytes (an eighth of the maximum heap, -Xmx, unless the library sets Sluice.Builder.maxPolicyBytes)");
        break;
      }
      assertThat(set).as("live limits set within 30,000 bytes").isLessThan(100);
    }
    assertThat(set).isBetween(5, 30);
    // A held one can still be replaced, by one of its size.
    join(a.policies().setLimit("api", key("user", 1), sixteenWindows()));
    // Refused before the store was written: the other instance does not see it.
    assertThat(join(b.policies().limit("api", key("user", set)))).isEmpty();
    // What a holds keeps working: 1 an hour in the first window.
    assertThat(a.acquire("api", key("user", 0)).allowed()).isTrue();
    assertThat(a.acquire("api", key("user", 0)).allowed()).isFalse();

    // Records set through another instance beyond a's bound are left out of a's cache, logged once.
    for (int i = 0; i < 20; i++) {
      join(b.policies().setLimit("api", key("other", i), sixteenWindows()));
    }
    long start = System.nanoTime();
    while (warnings.of("cache_full") < 20) {
      assertThat(System.nanoTime() - start).as("a read the other instance's records").isLessThan(10_000_000_000L);
      Thread.sleep(20);
    }
    // Which records a keeps is not promised (a full read of the store, which a poll that falls
    // behind makes, keeps those it meets first), only that it never holds more than fit: peeks
    // (cost 0) show which keys a answers with a live limit's sixteen windows.
    int held = 0;
    int heldOthers = 0;
    for (int i = 0; i < set; i++) {
      held += a.acquire("api", key("user", i), 0).items().get(0).windows().size() == 16 ? 1 : 0;
    }
    for (int i = 0; i < 20; i++) {
      heldOthers += a.acquire("api", key("other", i), 0).items().get(0).windows().size() == 16 ? 1 : 0;
    }
    assertThat(held + heldOthers).as("records a holds, of %d that fit", set).isLessThanOrEqualTo(set);
    assertThat(heldOthers).as("the other instance's records a holds").isLessThan(20);
    assertThat(b.acquire("api", key("other", 0)).items().get(0).windows()).hasSize(16);
    assertThat(lines.stream().filter(l -> l.contains("the limiter's cache of policies holds"))).hasSize(1);
  }

  @Test
  void aFloodOfAutomaticBansPastTheRecordCapLogsAFewLinesWithoutKeysAndCountsEveryOne() throws Exception {
    int cap = 20;
    int keys = 300;
    RateLimiter l = limiter(RedisStore.builder(redis.get().uri()).policyRecords(cap), Sluice.builder());
    long start = System.nanoTime();
    for (int i = 0; i < keys; i++) {
      String k = key("ip", i);
      assertThat(l.acquire("login", k).allowed()).isTrue();
      l.acquire("login", k); // denied: the key is banned
      assertThat(l.acquire("login", k).items().get(0).reason()).isEqualTo(dev.sluice.DenyReason.BANNED);
    }
    // The records are written after the decisions that learned the bans: wait for the last.
    long waited = System.nanoTime();
    while (warnings.of("ban_not_recorded") < keys - cap) {
      assertThat(System.nanoTime() - waited).as("every ban recorded or refused").isLessThan(10_000_000_000L);
      Thread.sleep(20);
    }
    double seconds = (System.nanoTime() - start) / 1e9;

    System.out.printf("ban flood: %d automatic bans past a cap of %d records in %.1f s: %d warning lines, %d counted%n",
        keys, cap, seconds, lines.size(), warnings.of("ban_not_recorded"));
    assertThat(warnings.of("ban_not_recorded")).isEqualTo(keys - cap);
    assertThat(lines).noneMatch(s -> s.contains("xxxxxxxxxx"));
    List<String> bans = lines.stream().filter(s -> s.contains(" ban")).toList();
    // One line per 10 s at most (and the first at once).
    assertThat(bans).isNotEmpty().hasSizeLessThanOrEqualTo(1 + (int) (seconds / 10) + 1);
    assertThat(bans.get(0)).isEqualTo("recording an automatic ban under rule 'login' failed (the ban holds in "
        + "decisions; listings lack it): the store keeps at most " + cap
        + " ban records: remove some, or let them expire");
    assertThat(join(l.policies().bans("login", null, 1000)).items()).hasSize(cap);
  }
}
