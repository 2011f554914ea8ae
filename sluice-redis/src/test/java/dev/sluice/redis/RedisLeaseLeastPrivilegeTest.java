package dev.sluice.redis;

import static dev.sluice.redis.RedisPolicyStoreTestBase.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.spi.LeaseBoard;
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
 * The commands the lease board runs, as {@code docs/redis-internals.md} lists them beside the
 * decisions' and the policies': an ACL user holding those does every board operation, and each
 * of them is needed.
 */
class RedisLeaseLeastPrivilegeTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  /** What the board adds to the decisions' and the policies' commands, as the doc gives them. */
  static final List<String> LEASE_COMMANDS = List.of("hscan", "zscore", "pttl");

  private static String createUser(List<String> commands) {
    String user = "lease" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    List<String> args = new ArrayList<>(List.of("ACL", "SETUSER", user));
    args.addAll(List.of(RedisLeastPrivilegeTest.rules(commands).split(" ")));
    redis.get().command(args.toArray(String[]::new));
    return "redis://" + user + ":" + RedisLeastPrivilegeTest.PASSWORD + "@127.0.0.1:" + redis.get().port();
  }

  private static List<String> documented() {
    List<String> all = new ArrayList<>(RedisLeastPrivilegeTest.NEEDED);
    all.addAll(RedisPolicyLeastPrivilegeTest.POLICY_COMMANDS);
    all.addAll(LEASE_COMMANDS);
    return all;
  }

  @Test
  void aUserHoldingTheDocumentedCommandsRunsEveryBoardOperation() {
    assertThat(smoke(createUser(documented()))).isEmpty();
  }

  @Test
  void everyLeaseCommandIsNeeded() {
    Map<String, String> without = new LinkedHashMap<>();
    for (String c : LEASE_COMMANDS) {
      List<String> fewer = documented();
      fewer.remove(c);
      without.put(c, smoke(createUser(fewer)));
    }
    assertThat(without).allSatisfy((c, failure) -> assertThat(failure).as("without +%s", c).isNotEmpty());
  }

  @Test
  void theDocumentedAclAdditionIsTheTestedOne() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "redis-internals.md"), StandardCharsets.UTF_8);
    assertThat(doc).contains("`" + LEASE_COMMANDS.stream().map(c -> "+" + c).collect(Collectors.joining(" ")) + "`");
  }

  /** Every board operation as {@code uri}'s user: what failed first ("step: error"), or "". */
  private static String smoke(String uri) {
    String step = "connect";
    String prefix = "sluice:ll" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    try (RedisStore store = RedisStore.builder(uri).prefix(prefix).commandTimeout(Duration.ofSeconds(2)).build()) {
      LeaseBoard board = store.leaseBoard().orElseThrow();
      step = "campaign";
      LeaseBoard.Leader a = join(board.campaign("a", 60_000));
      assertThat(join(board.campaign("a", 60_000)).token()).isEqualTo(a.token());
      step = "leader";
      assertThat(join(board.leader()).token()).isEqualTo(a.token());
      step = "report";
      join(board.report("x", new byte[] {1}, 50));
      assertThat(join(board.report("y", new byte[] {2}, 60_000)).instances()).isEqualTo(2);
      step = "publish";
      assertThat(join(board.publish("a", a.token(), Map.of("x", new byte[] {3}, "y", new byte[] {4}), 50))).isTrue();
      step = "sizes";
      assertThat(join(board.report("y", new byte[] {2}, 60_000)).sizes()).containsExactly(4);
      step = "expiry";
      Thread.sleep(100); // past x's report and the sizes on the server's clock (same machine)
      assertThat(join(board.report("y", new byte[] {2}, 60_000)).instances()).isEqualTo(1);
      assertThat(join(board.publish("a", a.token(), Map.of("y", new byte[] {5}), 60_000))).isTrue();
      step = "reports";
      assertThat(join(board.reports(1 << 20))).containsOnlyKeys("y");
      step = "resign";
      join(board.resign("a", a.token()));
      assertThat(join(board.publish("a", a.token(), Map.of("y", new byte[] {6}), 60_000))).isFalse();
      return "";
    } catch (Throwable e) {
      return step + ": " + e;
    }
  }
}
