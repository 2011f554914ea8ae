package dev.sluice.redis;

import static dev.sluice.redis.FailureBehaviourTest.awaitTrue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.SentinelGroup;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §5 and §8: when a Sentinel-managed master crashes, decisions degrade by failure mode while
 * there is no master, and the store follows the promotion by itself.
 */
class SentinelFailoverBehaviourTest {
  /** Its own group: the test kills the master. */
  @RegisterExtension
  static final RedisExtension<SentinelGroup> sentinel = RedisExtension.sentinel(Flavor.REDIS).perClass();

  /** From the promotion, as the Sentinels announce it, to a decision made on the new master. */
  static final long FOLLOW_MS = 5_000;

  final Rule closed = Rule.builder("fo.closed").window(1_000_000, Duration.ofMinutes(10))
      .failureMode(FailureMode.CLOSED).build();

  @Test
  void decisionsDegradeWhileTheMasterIsDownAndResumeOnThePromotedReplicaByThemselves() throws Exception {
    RecordingListener listener = new RecordingListener();
    List<Decision> degraded = new CopyOnWriteArrayList<>();
    RedisStore store = RedisStore.connect(sentinel.get().uri());
    try (RateLimiter limiter = Sluice.builder().rules(closed).store(store).storeTimeout(Duration.ofMillis(200))
        .listener(listener).build()) {
      assertThat(limiter.acquire(Request.of("fo.closed", "before")).degraded()).isFalse();
      int oldMaster = sentinel.get().masterPort();

      Thread traffic = new Thread(() -> {
        while (!Thread.currentThread().isInterrupted()) {
          Decision d = limiter.acquire(Request.of("fo.closed", "during"));
          if (d.degraded()) {
            degraded.add(d);
          }
          try {
            // Paced, so that the traffic leaves the machine's two cores to the servers.
            Thread.sleep(5);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "failover-traffic");
      traffic.start();
      int newMaster;
      long promoted;
      try {
        newMaster = sentinel.get().killMaster();
        promoted = System.nanoTime();
        awaitTrue("a decision made on the new master", FOLLOW_MS,
            () -> !limiter.acquire(Request.of("fo.closed", "probe")).degraded());
      } finally {
        traffic.interrupt();
        traffic.join(10_000);
      }
      System.out.printf("SentinelFailoverBehaviourTest: %d degraded decisions; decided on the new master %d ms after"
          + " the Sentinels named it%n", degraded.size(), (System.nanoTime() - promoted) / 1_000_000);

      assertThat(newMaster).isNotEqualTo(oldMaster);
      assertThat(traffic.isAlive()).isFalse();
      assertThat(degraded).as("the crash was seen: no master answered for a while").isNotEmpty()
          .allSatisfy(d -> {
            assertThat(d.allowed()).isFalse();
            assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.STORE_UNAVAILABLE);
          });
      assertThat(listener.storeErrors).hasSize(listener.degraded.get());
      Decision after = limiter.acquire(Request.of("fo.closed", "after"));
      assertThat(after.allowed()).isTrue();
      assertThat(after.degraded()).isFalse();
      assertThat(sentinel.get().command("EXISTS", store.keyName("fo.closed", "after"))).as("written on the new master")
          .isEqualTo(1L);
    }
  }
}
