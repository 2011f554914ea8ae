package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.testing.FakeTicker;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Requests whose items live on different Cluster shards: reserve on each, refund on a denial. */
class RedisClusterTest extends DifferentialTestBase {
  @RegisterExtension
  static final RedisExtension<Cluster> redis = RedisExtension.cluster(Flavor.REDIS);

  @Override
  String uri() {
    return redis.get().uri();
  }

  @Override
  void flush() {
    redis.get().flushAll();
  }

  private static String unique(String stem) {
    return stem + "." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  }

  private static int slot(RedisStore store, Rule rule, String key) {
    return SlotHash.getSlot(store.keyName(rule.name(), key).getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aDenialOnOneShardRefundsTheReservationOnAnother() {
    for (Algorithm a : Algorithm.values()) {
      Rule global = Rule.builder(unique("global")).algorithm(a).window(5, Duration.ofMinutes(1)).build();
      // A shaping user rule without a queue denies instead of delaying.
      Rule user = Rule.builder(unique("user")).algorithm(a).window(1, Duration.ofMinutes(1)).maxWait(Duration.ZERO).build();
      MemoryStore reference = MemoryStore.builder().ticker(new FakeTicker()).build();
      try (RedisStore store = RedisStore.connect(redis.get().uri())) {
        assertThat(slot(store, global, "all")).isNotEqualTo(slot(store, user, "u1"));
        long t = 1_800_000_000_000_000L;
        Batch first = two(global, "all", user, "u1", t);
        assertThat(store.decideSync(first)).allMatch(ItemDecision::allowed).isEqualTo(reference.decideSync(first));
        // The user item is denied now; the global item fits, is reserved, then refunded.
        Batch second = two(global, "all", user, "u1", t + 1000);
        List<ItemDecision> denied = store.decideSync(second);
        assertThat(denied.get(0).allowed()).as(a.configName()).isTrue();
        assertThat(denied.get(1).allowed()).as(a.configName()).isFalse();
        assertThat(denied).as(a.configName()).isEqualTo(reference.decideSync(second));
        Batch peek = new Batch(List.of(new ResolvedItem(global, "all", 0, global.windows())), t + 2000);
        assertThat(store.decideSync(peek)).as(a.configName()).isEqualTo(reference.decideSync(peek));
        // The refund left its marker beside the global key, for two of its windows and the slack.
        String marker = refundMarker(store.keyName(global.name(), "all"));
        int markerSlot = SlotHash.getSlot(marker.getBytes(StandardCharsets.UTF_8));
        assertThat(markerSlot).isEqualTo(slot(store, global, "all"));
        assertThat((Long) redis.get().commandOn(redis.get().masterPortForSlot(markerSlot), "PTTL", marker))
            .as(a.configName()).isBetween(60_001L, 121_000L);
      }
    }
  }

  /** The one refund marker of {@code stateKey}, wherever its shard is. */
  private static String refundMarker(String stateKey) {
    List<String> found = new ArrayList<>();
    for (Object keys : redis.get().commandOnAll("KEYS", stateKey.replace("{", "\\{").replace("}", "\\}") + ":refund:*")) {
      if (keys instanceof List<?> l) {
        l.forEach(k -> found.add(String.valueOf(k)));
      }
    }
    assertThat(found).hasSize(1);
    return found.get(0);
  }

  @Test
  void everyMasterRunsTheLibraryAndGetsItBackAfterAFunctionFlush() throws InterruptedException {
    Rule rule = Rule.builder(unique("fcall")).window(1_000, Duration.ofHours(1)).build();
    try (RedisStore store = RedisStore.connect(redis.get().uri())) {
      assertThat(everyMasterHasTheLibrary()).isTrue();
      List<String> keys = new ArrayList<>();
      for (int i = 0; keys.size() < 30; i++) {
        keys.add("k" + i);
      }
      long fcall = redis.get().commandCalls("fcall");
      long script = redis.get().commandCalls("evalsha") + redis.get().commandCalls("eval");
      for (String k : keys) {
        assertThat(store.decideSync(new Batch(List.of(new ResolvedItem(rule, k, 1, rule.windows())), Request.STORE_CLOCK))
            .get(0).allowed()).isTrue();
      }
      // Keys on all three masters, each decided by one FCALL.
      assertThat(redis.get().commandCalls("fcall") - fcall).isEqualTo(keys.size());
      assertThat(redis.get().commandCalls("evalsha") + redis.get().commandCalls("eval")).isEqualTo(script);

      redis.get().commandOnAll("FUNCTION", "FLUSH");
      for (String k : keys) {
        ItemDecision d = store.decideSync(
            new Batch(List.of(new ResolvedItem(rule, k, 1, rule.windows())), Request.STORE_CLOCK)).get(0);
        assertThat(d.allowed()).isTrue();
        // Counted once each time: 1,000 less the two decisions so far.
        assertThat(d.windows().get(0).remaining()).isEqualTo(998);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (!everyMasterHasTheLibrary() && System.nanoTime() < deadline) {
        Thread.sleep(10); // the reload is asynchronous: waiting for the servers, not for limiter time
      }
      assertThat(everyMasterHasTheLibrary()).isTrue();
    }
  }

  private static boolean everyMasterHasTheLibrary() {
    return redis.get().commandOnAll("FUNCTION", "LIST").stream()
        .allMatch(list -> String.valueOf(list).contains(DecisionScript.FUNCTION));
  }

  private static Batch two(Rule a, String ka, Rule b, String kb, long t) {
    return new Batch(List.of(new ResolvedItem(a, ka, 1, a.windows()), new ResolvedItem(b, kb, 1, b.windows())), t);
  }

  /**
   * Many concurrent requests, each one global item and one per-user item on other shards. Users
   * have room for one request each, so most global reservations are refunded while others are
   * made: the global window must never hold more than its limit, and no refund may be lost.
   */
  @Test
  void concurrentCrossShardRequestsNeverOverAdmit() throws Exception {
    for (Algorithm a : List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG, Algorithm.TOKEN_BUCKET)) {
      Rule global = Rule.builder(unique("cglobal")).algorithm(a).window(40, Duration.ofMinutes(5)).build();
      Rule user = Rule.builder(unique("cuser")).algorithm(a).window(1, Duration.ofMinutes(5)).build();
      try (RedisStore store = RedisStore.builder(redis.get().uri()).commandTimeout(Duration.ofSeconds(30)).build()) {
        List<CompletableFuture<List<ItemDecision>>> all = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
          all.add(store.decide(new Batch(List.of(
              new ResolvedItem(global, "all", 1, global.windows()),
              new ResolvedItem(user, "u" + (i % 60), 1, user.windows())), Request.STORE_CLOCK)).toCompletableFuture());
        }
        int admitted = 0;
        for (CompletableFuture<List<ItemDecision>> f : all) {
          List<ItemDecision> d = f.get(30, TimeUnit.SECONDS);
          admitted += d.get(0).allowed() && d.get(1).allowed() ? 1 : 0;
        }
        assertThat(admitted).as(a.configName()).isBetween(1, 40);
        ItemDecision peek = store.decideSync(new Batch(List.of(new ResolvedItem(global, "all", 0, global.windows())),
            Request.STORE_CLOCK)).get(0);
        long held = 40 - peek.windows().get(0).remaining();
        // Exactly what was admitted, or more while a refund after an interleaving was conservative.
        assertThat(held).as(a.configName()).isGreaterThanOrEqualTo(admitted);
        if (a != Algorithm.SLIDING_LOG) {
          assertThat(held).as(a.configName()).isEqualTo(admitted);
        }
      }
    }
  }
}
