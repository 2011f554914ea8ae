package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.SentinelGroup;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A store on a Sentinel URI follows the master when it fails over. */
class RedisSentinelFailoverTest {
  @RegisterExtension
  static final RedisExtension<SentinelGroup> redis = RedisExtension.sentinel(Flavor.REDIS).perClass();

  @Test
  void decisionsContinueOnThePromotedReplicaWithTheStateReplicatedBeforeTheCrash() throws Exception {
    Rule rule = Rule.builder("failover").window(100, Duration.ofMinutes(5)).build();
    Batch one = new Batch(List.of(new ResolvedItem(rule, "k", 1, rule.windows())), Request.STORE_CLOCK);
    // Both URI forms name the same master.
    String uri = redis.get().uri().replace("#", "/0#");
    try (RedisStore store = RedisStore.builder(uri).commandTimeout(Duration.ofSeconds(2)).build()) {
      assertThat(store.describe()).startsWith("redis redis-sentinel://127.0.0.1:").contains("#mymaster");
      for (int i = 0; i < 10; i++) {
        assertThat(store.decideSync(one).get(0).allowed()).isTrue();
      }
      assertThat(redis.get().command("WAIT", "1", "5000")).isEqualTo(1L);
      int before = redis.get().masterPort();
      int after = redis.get().killMaster();
      assertThat(after).isNotEqualTo(before);

      ItemDecision d = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
      while (d == null && System.nanoTime() < deadline) {
        try {
          d = store.decide(one).toCompletableFuture().get(5, TimeUnit.SECONDS).get(0);
        } catch (Exception reconnecting) {
          // Commands fail while the client finds the new master; the engine's failure mode covers this.
          Thread.sleep(100);
        }
      }
      assertThat(d).as("a decision on the new master").isNotNull();
      assertThat(d.allowed()).isTrue();
      assertThat(d.windows().get(0).remaining()).isEqualTo(89);
      assertThat(store.ping().toCompletableFuture().get(5, TimeUnit.SECONDS)).isTrue();
    }
  }
}
