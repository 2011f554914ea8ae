package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Grants.Grant;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.FaultProxy;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Monitor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A refund whose reply is lost runs again: Lettuce, reconnecting, sends the command once more
 * (at-least-once). Here the connection to a real server is reset right after the refund reached
 * it (a {@link FaultProxy} cuts its reply), the client reconnects and sends it again, and the
 * server runs it twice. The units come back once: what the windows admit afterwards is what one
 * give-back leaves, on every algorithm that leases.
 */
class RefundSentAgainTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static final long T0 = 1_800_000_000_000_000L;
  /** The refund's mode argument as it goes on the wire. */
  private static final byte[] REFUND_MODE = "$1\r\nu\r\n".getBytes(StandardCharsets.US_ASCII);

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void aGiveBackSentTwiceGivesBackOnce(Algorithm a) {
    Rule rule = Rule.builder("resent." + a.configName() + "." + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36))
        .algorithm(a).window(10, Duration.ofSeconds(10)).build();
    ResolvedItem one = new ResolvedItem(rule, "k", 1, rule.windows());
    try (FaultProxy proxy = FaultProxy.start(redis.get().port());
        RedisStore store = RedisStore.builder(proxy.uri()).ttlSlack(Duration.ofMinutes(10))
            .commandTimeout(Duration.ofSeconds(10)).build(); // a reconnection on a busy machine takes its time
        Monitor monitor = Monitor.start(redis.get().port())) {
      RedisGrants grants = (RedisGrants) store.grants().orElseThrow();
      Grant g = grants.takeAt(one, 10, T0).toCompletableFuture().join();
      assertThat(g.units()).isEqualTo(10);

      proxy.cutReplyTo(REFUND_MODE);
      grants.giveBack(one, g, 4).toCompletableFuture().join();

      assertThat(proxy.cutReplyPending()).as("the refund's reply was cut").isFalse();
      assertThat(proxy.connectionsCut()).isEqualTo(1);
      assertThat(refundsRun(monitor)).as("the server ran the refund twice: sent, then sent again").isEqualTo(2);
      // Four units came back, not eight.
      assertThat(decide(store, cost(one, 4), T0 + 1000)).as("the units given back").isTrue();
      assertThat(decide(store, one, T0 + 2000)).as("no more than were given back once").isFalse();
    }
  }

  private static long refundsRun(Monitor monitor) {
    long deadline = System.nanoTime() + 2_000_000_000L;
    long n;
    // Lines of commands sent by a client (scripts' own commands say "lua"), whose mode is the
    // refund; MONITOR's lines arrive on their own connection, a moment after the replies.
    while ((n = monitor.lines().stream().filter(l -> !l.contains(" lua]") && l.contains(" \"u\" ")).count()) < 2
        && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    return n;
  }

  private static ResolvedItem cost(ResolvedItem it, long cost) {
    return new ResolvedItem(it.rule(), it.key(), cost, it.windows());
  }

  private static boolean decide(RedisStore store, ResolvedItem it, long at) {
    return store.decideSync(new Batch(List.of(it), at)).get(0).allowed();
  }
}
