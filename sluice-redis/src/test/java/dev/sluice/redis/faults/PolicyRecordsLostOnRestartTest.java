package dev.sluice.redis.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.DecisionListener;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.Window;
import dev.sluice.redis.RedisStore;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import dev.sluice.testing.WarningLines;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The server restarts empty (no persistence): the live limits, bans and list entries kept in it
 * are gone on every instance, as designed. Each instance says so, once, at WARN, with the counts
 * of what it held, and counts them in its metrics; the only line used to be "reading the store's
 * policies works again".
 */
class PolicyRecordsLostOnRestartTest {
  /** Its own server: the test restarts it. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  static final class Lost implements DecisionListener {
    final Map<String, Long> byKind = new ConcurrentHashMap<>();

    @Override
    public void onPolicyRecordsLost(String kind, long count) {
      byKind.merge(kind, count, Long::sum);
    }
  }

  @Test
  void aStoreRestartedEmptyIsReportedOnceWithTheCountsOfWhatThisInstanceHeld() throws Exception {
    WarningLines warnings = WarningLines.of("dev.sluice.internal.policy.PolicyCache");
    List<String> lines = warnings.lines();
    Lost lost = new Lost();
    Rule api = Rule.builder("api").window(5, Duration.ofHours(1)).build();
    RedisStore store = RedisStore.connect(redis.get().uri());
    try (RateLimiter limiter = Sluice.builder().rules(api).store(store).listener(lost).build()) {
      LiveLimit two = LiveLimit.windows(List.of(new Window(2, Duration.ofHours(1))));
      join(limiter.policies().setLimit("api", "user:secret-1", two));
      join(limiter.policies().setLimit("api", "user:secret-2", two));
      join(limiter.policies().ban("api", "ip:10.0.0.1", Instant.now().plus(Duration.ofHours(1))));
      join(limiter.policies().addToList(ListKind.DENY, "api", "ip:10.9.0.0/16"));
      // The poll has read the store's version since (it reads every 250 ms).
      Thread.sleep(1_000);
      assertThat(lines).noneMatch(l -> l.contains("were reset"));

      redis.get().stop();
      Thread.sleep(500); // a few failed reads, as in an outage
      redis.get().restart();

      Probe.await("the reset reported", 20_000, () -> lines.stream().anyMatch(l -> l.contains("were reset")));
      // Later polls find nothing more to report.
      Thread.sleep(1_000);
      List<String> resets = lines.stream().filter(l -> l.contains("were reset")).toList();
      assertThat(resets).hasSize(1);
      assertThat(resets.get(0)).matches("the store's policies were reset \\(their version went back from \\d+ to 0: "
          + "the store restarted empty or was flushed\\); this instance held 2 live limit\\(s\\), 1 ban\\(s\\) and "
          + "1 list entry\\(ies\\) that the store no longer has: they no longer apply, on any instance");
      assertThat(lost.byKind).isEqualTo(Map.of("limit", 2L, "ban", 1L, "list_entry", 1L));
      assertThat(String.join("\n", lines)).doesNotContain("secret", "10.0.0.1", "10.9.0.0");
      // As designed, they are gone: the key is limited by the rule again.
      assertThat(limiter.acquire("api", "user:secret-1").items().get(0).windows().get(0).limit()).isEqualTo(5);
    } finally {
      warnings.close();
      store.close();
    }
  }

  static <T> T join(java.util.concurrent.CompletionStage<T> s) {
    return s.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }
}
