package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.DenyReason;
import dev.sluice.Rule;
import dev.sluice.conformance.BansAndAuditConformanceTest;
import dev.sluice.spi.Store;
import io.lettuce.core.ScriptOutputType;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bans and audit suite on a Redis store, with what only Redis has: the sibling keys
 * {@code <state key>:ban} and {@code <state key>:audit}, their TTLs, and a second store on the
 * same server.
 */
abstract class RedisBansAndAuditConformance extends BansAndAuditConformanceTest {

  abstract String uri();

  @Override
  protected Store newStore() {
    return SharedStore.of(uri());
  }

  private static RedisStore redis(Store store) {
    return ((SharedStore) store).store();
  }

  @Override
  protected void ban(Store store, Rule rule, String key, long untilMicros) {
    redis(store).banKey(rule, key, untilMicros / 1000).toCompletableFuture().join();
  }

  @Override
  protected void unban(Store store, Rule rule, String key) {
    redis(store).unbanKey(rule.name(), key).toCompletableFuture().join();
  }

  @Override
  protected List<String> audit(Store store, Rule rule, String key) {
    return redis(store).audit(rule.name(), key).toCompletableFuture().join();
  }

  /** PTTL of the state key and of its two siblings (-2: absent), in one call on their shard. */
  private static List<Long> ttls(RedisStore store, String rule, String key) {
    byte[] state = store.keyName(rule, key).getBytes(StandardCharsets.UTF_8);
    byte[][] keys = {state, (store.keyName(rule, key) + ":ban").getBytes(StandardCharsets.UTF_8),
        (store.keyName(rule, key) + ":audit").getBytes(StandardCharsets.UTF_8)};
    byte[] script = ("return {redis.call('PTTL', KEYS[1]), redis.call('PTTL', KEYS[2]), "
        + "redis.call('PTTL', KEYS[3])}").getBytes(StandardCharsets.UTF_8);
    return store.link().<List<Long>>eval(script, ScriptOutputType.MULTI, keys, new byte[0][]).join();
  }

  @Test
  void aBanStartedThroughOneStoreIsEnforcedByAnotherOnTheSameServer() {
    Rule r = rule("ban").window(1, Duration.ofMinutes(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
        Duration.ofSeconds(30))).build();
    decide(store(), 0, item(r, "k"));
    decide(store(), 1, item(r, "k"));
    try (RedisStore other = RedisStore.builder(uri()).ttlSlack(Duration.ofMinutes(1)).build()) {
      var d = decide(other, 2, item(r, "k")).get(0);
      assertThat(d.reason()).isEqualTo(DenyReason.BANNED);
      assertThat(d.blockedMs()).isEqualTo(29_999);
      assertThat(other.tryAcquireAsync(item(r, "k")).toCompletableFuture().join()).isFalse();
    }
  }

  @Test
  void theSiblingKeysLiveBesideTheStateKeyAndTheAuditListHasItsTtl() {
    Rule r = rule("both").window(1, Duration.ofSeconds(20)).ban(new BanPolicy(1, Duration.ofMinutes(1),
        Duration.ofMinutes(5))).audit(new AuditPolicy(3, "user")).build();
    RedisStore s = redis(store());
    assertThat(ttls(s, r.name(), "k")).containsExactly(-2L, -2L, -2L);
    decide(store(), 0, item(r, "k", 1, "alice"));
    List<Long> afterAdmission = ttls(s, r.name(), "k");
    assertThat(afterAdmission.get(1)).as("no denial yet: no ban key").isEqualTo(-2L);
    // The audit list expires with the state: 20 s plus the store's slack of a minute. It copies
    // the state's TTL (PTTL, then PEXPIRE a moment later), so it may end a millisecond after it.
    assertThat(afterAdmission.get(2)).isBetween(afterAdmission.get(0) - 1_000, afterAdmission.get(0) + 2)
        .isGreaterThan(60_000 + 15_000);
    decide(store(), 1, item(r, "k", 1, "bob"));
    // The ban key lasts for the ban (5 min) plus the slack.
    assertThat(ttls(s, r.name(), "k").get(1)).isBetween(300_000L, 360_000L);
    assertThat(audit(store(), r, "k")).containsExactly("alice");
  }

  @Test
  void anOperatorsBanInThePastLiftsAnyBan() {
    Rule r = rule("ban").window(1, Duration.ofMinutes(1)).ban(new BanPolicy(1, Duration.ofMinutes(1),
        Duration.ofSeconds(30))).build();
    RedisStore s = redis(store());
    s.banKey(r, "k", System.currentTimeMillis() + 60_000).toCompletableFuture().join();
    assertThat(ttls(s, r.name(), "k").get(1)).isBetween(50_000L, 60_000L);
    s.banKey(r, "k", System.currentTimeMillis() - 1).toCompletableFuture().join();
    assertThat(ttls(s, r.name(), "k").get(1)).isEqualTo(-2L);
    assertThat(s.unbanKey(r.name(), "k").toCompletableFuture().join()).isFalse();
  }

  /**
   * Two rules' keys: one call on a standalone server; two slots on a Cluster, where the values
   * are recorded once every shard has admitted.
   */
  @Test
  void aRequestOfTwoAuditedRulesRecordsEachValueItConsumesAndNoneWhenDenied() {
    Rule a = rule("audit.a").window(5, Duration.ofMinutes(1)).audit(new AuditPolicy(3, "user")).build();
    Rule b = rule("audit.b").window(1, Duration.ofMinutes(1)).audit(new AuditPolicy(3, "user")).build();
    assertThat(decide(store(), 0, item(a, "k", 1, "u1"), item(b, "k", 1, "u1")))
        .allMatch(d -> d.allowed());
    assertThat(decide(store(), 1, item(a, "k", 1, "u2"), item(b, "k", 1, "u2")).get(1).allowed()).isFalse();
    assertThat(audit(store(), a, "k")).containsExactly("u1");
    assertThat(audit(store(), b, "k")).containsExactly("u1");
    List<Long> ttls = ttls(redis(store()), a.name(), "k");
    // The audit list copies the state's TTL (PTTL, then PEXPIRE a moment later): within 2 ms.
    assertThat(ttls.get(2)).isBetween(ttls.get(0) - 1_000, ttls.get(0) + 2);
  }
}
