package dev.sluice.redis;

import static dev.sluice.redis.RedisPolicyStoreTestBase.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The commands policies run, as {@code docs/redis-internals.md} lists them beside the decisions':
 * an ACL user holding those does every policy operation, and each of them is needed.
 */
class RedisPolicyLeastPrivilegeTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  /** What policies add to the decisions' commands, as the doc gives them. */
  static final List<String> POLICY_COMMANDS = List.of("incr", "hget", "hset", "hdel", "hlen", "hmget", "zadd", "zrem",
      "zcard", "zcount", "zrange", "zrangebyscore", "zrangebylex", "zremrangebyrank", "lrange");

  private static String createUser(List<String> commands) {
    String user = "pol" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    List<String> args = new ArrayList<>(List.of("ACL", "SETUSER", user));
    args.addAll(List.of(RedisLeastPrivilegeTest.rules(commands).split(" ")));
    redis.get().command(args.toArray(String[]::new));
    return "redis://" + user + ":" + RedisLeastPrivilegeTest.PASSWORD + "@127.0.0.1:" + redis.get().port();
  }

  private static List<String> documented() {
    List<String> all = new ArrayList<>(RedisLeastPrivilegeTest.NEEDED);
    all.addAll(POLICY_COMMANDS);
    return all;
  }

  @Test
  void aUserHoldingTheDocumentedCommandsRunsEveryPolicyOperation() {
    assertThat(smoke(createUser(documented()))).isEmpty();
  }

  @Test
  void everyPolicyCommandIsNeeded() {
    Map<String, String> without = new LinkedHashMap<>();
    for (String c : POLICY_COMMANDS) {
      List<String> fewer = documented();
      fewer.remove(c);
      without.put(c, smoke(createUser(fewer)));
    }
    assertThat(without).allSatisfy((c, failure) -> assertThat(failure).as("without +%s", c).isNotEmpty());
  }

  @Test
  void theDocumentedAclAdditionIsTheTestedOne() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "redis-internals.md"), StandardCharsets.UTF_8);
    assertThat(doc).contains("`" + POLICY_COMMANDS.stream().map(c -> "+" + c).collect(Collectors.joining(" ")) + "`");
  }

  /** What rules that audit add, in the decisions themselves, as the doc gives them. */
  static final List<String> AUDIT_COMMANDS = List.of("lindex", "lrem", "lpush", "ltrim", "pttl");

  @Test
  void aUserHoldingTheDocumentedCommandsDecidesRulesThatBanAndAudit() {
    List<String> all = documented();
    all.addAll(AUDIT_COMMANDS);
    assertThat(audited(createUser(all))).isEmpty();
  }

  @Test
  void everyAuditCommandIsNeeded() {
    Map<String, String> without = new LinkedHashMap<>();
    for (String c : AUDIT_COMMANDS) {
      List<String> fewer = documented();
      fewer.addAll(AUDIT_COMMANDS);
      fewer.remove(c);
      without.put(c, audited(createUser(fewer)));
    }
    assertThat(without).allSatisfy((c, failure) -> assertThat(failure).as("without +%s", c).isNotEmpty());
  }

  @Test
  void theDocumentedAuditAdditionIsTheTestedOne() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "redis-internals.md"), StandardCharsets.UTF_8)
        .replaceAll("\\s+", " ");
    assertThat(doc).contains("`" + AUDIT_COMMANDS.stream().map(c -> "+" + c).collect(Collectors.joining(" ")) + "`");
  }

  /**
   * Decisions of a rule that bans and audits, through a limiter as a user builds one, as {@code
   * uri}'s user: the same value twice (the list's head kept), another, then denials counted toward
   * the ban and the ban answered; what failed first ("step: error"), or "". The store fails
   * closed, so that a refused command shows as a denial where an admission was due.
   */
  private static String audited(String uri) {
    String step = "connect";
    String prefix = "sluice:pa" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    Rule rule = Rule.builder("login").window(3, Duration.ofMinutes(1)).failureMode(FailureMode.CLOSED)
        .ban(new BanPolicy(2, Duration.ofMinutes(1), Duration.ofMinutes(1))).audit(new AuditPolicy(5, "user")).build();
    RuleSet rules = RuleSet.of(List.of(rule)).withOperations(
        List.of(Operation.of("signin", OperationItem.of("login", "ip:{ip}"))), List.of());
    try (RateLimiter limiter = Sluice.builder().rules(rules).denialCache(0)
        .store(RedisStore.builder(uri).prefix(prefix).commandTimeout(Duration.ofSeconds(2)).build()).build()) {
      for (String user : List.of("ann", "ann", "bob")) {
        step = "admit " + user;
        Decision d = limiter.acquire(OperationRequest.of("signin", Map.of("ip", "192.0.2.1", "user", user)));
        assertThat(d.degraded()).as("degraded").isFalse();
        assertThat(d.allowed()).isTrue();
      }
      step = "audit";
      assertThat(join(limiter.policies().audit("login", "ip:192.0.2.1"))).containsExactly("bob", "ann");
      step = "count denials";
      for (int i = 0; i < 2; i++) {
        Decision d = limiter.acquire(OperationRequest.of("signin", Map.of("ip", "192.0.2.1", "user", "eve")));
        assertThat(d.degraded()).as("degraded").isFalse();
        assertThat(d.items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
      }
      step = "banned";
      Decision banned = limiter.acquire(OperationRequest.of("signin", Map.of("ip", "192.0.2.1", "user", "eve")));
      assertThat(banned.items().get(0).reason()).isEqualTo(DenyReason.BANNED);
      return "";
    } catch (Throwable e) {
      return step + ": " + e;
    }
  }

  /** Every policy operation as {@code uri}'s user: what failed first ("step: error"), or "". */
  private static String smoke(String uri) {
    String step = "connect";
    String prefix = "sluice:pl" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    try (RedisStore store = RedisStore.builder(uri).prefix(prefix).commandTimeout(Duration.ofSeconds(2)).build()) {
      // A log of two records, so that three changes trim it.
      RedisPolicyStore p = new RedisPolicyStore(store.link(), prefix,
          new StateSiblings(store.link(), new KeyNames(prefix)), 2, 1_000, 100);
      step = "put";
      join(p.put(new PolicyRecord(PolicyKind.LIMIT, "r", "a", "tier:free", 0)));
      join(p.put(new PolicyRecord(PolicyKind.LIMIT, "r", "b", "tier:free", 4_000_000_000_000L)));
      step = "ban";
      join(p.put(new PolicyRecord(PolicyKind.BAN, "r", "c", "manual", 4_000_000_000_000L)));
      step = "get";
      assertThat(join(p.get(PolicyKind.LIMIT, "r", "a"))).isPresent();
      step = "page";
      assertThat(join(p.page(PolicyKind.LIMIT, "r", null, 10))).hasSize(2);
      step = "changes";
      assertThat(join(p.changesSince(0)).complete()).isFalse();
      assertThat(join(p.changesSince(2)).changed()).hasSize(1);
      step = "expiry";
      join(p.put(new PolicyRecord(PolicyKind.ALLOW, "r", "d", "", System.currentTimeMillis() + 50)));
      Thread.sleep(100); // past the record's expiry on the server's clock (same machine)
      assertThat(join(p.version())).isEqualTo(5);
      step = "remove";
      assertThat(join(p.remove(PolicyKind.BAN, "r", "c"))).isTrue();
      step = "audit";
      assertThat(join(p.audit("r", "c"))).isEmpty();
      step = "denials";
      join(p.addDenials("r", 1, "sketch/1 2 3 2\n2 0 1 x\n1 0 1 y\n"));
      join(p.addDenials("r", 1, "sketch/1 2 1 1\n1 0 1 z\n"));
      assertThat(join(p.denials("r", 0, 2))).containsExactly("sketch/1 2 4 2\n2 0 1 x\n2 1 1 z\n");
      step = "heartbeat";
      assertThat(join(p.heartbeat("i1", 60_000))).isEqualTo(1);
      step = "members";
      assertThat(join(p.members(60_000, 10)).first()).extracting(Membership.Member::instance).containsExactly("i1");
      join(p.leave("i1"));
      return "";
    } catch (Throwable e) {
      return step + ": " + e;
    }
  }
}
