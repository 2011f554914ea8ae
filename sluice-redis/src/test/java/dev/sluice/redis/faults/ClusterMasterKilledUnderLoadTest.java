package dev.sluice.redis.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.faults.Traffic.Calls;
import dev.sluice.redis.faults.Traffic.Outcome;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §5 and §8 on a Cluster: a master with a replica crashes (SIGKILL) under steady traffic.
 * One lane per failure mode on a hot key of the killed master's shard, driven past its limit
 * across the failover, and a lane on another shard. The store's topology refresh finds the
 * promoted replica by itself.
 */
class ClusterMasterKilledUnderLoadTest {
  /** Its own Cluster: each test kills a master (another one each time). */
  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.clusterWithReplicas(Flavor.REDIS).perClass();

  /** From the promotion, as the nodes report it, to a decision made on the new master: the target. */
  static final long FOLLOW_MS = 5_000;
  /**
   * What the store achieves: its topology refresh runs at most once a second on reconnection
   * attempts, which come at most a second apart (Lettuce's default of once in 5 s made this up
   * to 5 s).
   */
  static final long REFRESH_MS = 2_000;
  static final long LIMIT = 3_000;

  /** What a failover did to the killed shard's lanes (one per failure mode) and to another shard's. */
  record Run(List<FailoverFigures> figures, Calls elsewhere, ModeListener listener) {}

  @Test
  void eachFailureModeDecidesWhileTheShardHasNoMasterAndThePromotedReplicaDecidesWithinFiveSeconds()
      throws Exception {
    // Redis's default, cluster-require-full-coverage yes: while a shard has no master, every
    // node refuses every command (CLUSTERDOWN), so the other shards' decisions degrade too.
    Run run = failover("cfo", "cluster-master-killed");
    for (FailoverFigures f : run.figures) {
      assertThat(f.afterPromotionMs()).as("[%s] decided on the promoted replica within 5 s of the promotion",
          f.mode()).isLessThanOrEqualTo(FOLLOW_MS);
      assertThat(f.afterPromotionMs()).as("[%s] decided on the promoted replica at the next topology refresh",
          f.mode()).isLessThanOrEqualTo(REFRESH_MS);
      assertThat(f.degradedAllowed() + f.degradedDenied()).as("[%s] the outage was seen", f.mode()).isPositive();
      assertThat(f.overAdmission()).as("[%s] admitted beyond the limit: at most what the old master acknowledged"
          + " in its last moments", f.mode()).isLessThanOrEqualTo(f.ackedJustBefore());
    }
    assertThat(run.figures.get(0).errors()).as("exceptions thrown to callers of an open rule").isZero();
    assertThat(run.figures.get(2).errors()).as("exceptions thrown to callers of a local rule").isZero();
    assertThat(run.figures.get(1).errors()).as("exceptions thrown to callers of a closed rule").isZero();
    assertThat(run.elsewhere.count(Outcome.ERROR)).isZero();
    assertThat(run.listener.wrong.get()).as("degraded decisions that did not follow their failure mode").isZero();
    assertThat(run.listener.storeErrors.get()).isEqualTo(run.listener.degraded.get());
  }

  @Test
  void withoutFullCoverageRequiredTheOtherShardsKeepDecidingWhileOneHasNoMaster() throws Exception {
    cluster.get().commandOnEveryNode("CONFIG", "SET", "cluster-require-full-coverage", "no");
    try {
      Run run = failover("cfo2", "cluster-master-killed-partial-coverage");
      for (FailoverFigures f : run.figures) {
        assertThat(f.afterPromotionMs()).as("[%s]", f.mode()).isLessThanOrEqualTo(REFRESH_MS);
        assertThat(f.errors()).as("[%s] exceptions thrown to callers", f.mode()).isZero();
      }
      assertThat(run.elsewhere.count(Outcome.ERROR)).isZero();
      assertThat(run.elsewhere.degraded()).as("degraded decisions on a shard whose master is up").isZero();
      assertThat(run.listener.wrong.get()).isZero();
    } finally {
      cluster.get().commandOnEveryNode("CONFIG", "SET", "cluster-require-full-coverage", "yes");
    }
  }

  /**
   * Kills a master that has a replica while three lanes (open, closed, local) drive a hot key of
   * its shard past its limit and one lane decides on another shard; prints the figures.
   */
  private Run failover(String prefix, String figuresName) throws Exception {
    Rule open = rule(prefix + ".open", FailureMode.OPEN);
    Rule closed = rule(prefix + ".closed", FailureMode.CLOSED);
    Rule local = rule(prefix + ".local", FailureMode.LOCAL);
    Rule elsewhere = Rule.builder(prefix + ".elsewhere").window(1_000_000, Duration.ofMinutes(10))
        .failureMode(FailureMode.CLOSED).build();
    ModeListener listener = new ModeListener(open, closed, local, elsewhere);
    RedisStore store = RedisStore.connect(cluster.get().uri());
    try (RateLimiter limiter = Sluice.builder().rules(open, closed, local, elsewhere).store(store).listener(listener)
        .build()) {
      int victim = cluster.get().portsWithReplica().get(0);
      Traffic traffic = new Traffic(limiter, 1_000);
      for (Rule r : List.of(open, closed, local)) {
        String key = keyOn(store, r, victim, true);
        assertThat(limiter.acquire(Request.of(r.name(), "warm-" + key)).degraded()).isFalse();
        traffic.lane(r.failureMode().name(), 2, () -> Request.of(r.name(), key));
      }
      String other = keyOn(store, elsewhere, victim, false);
      traffic.lane("elsewhere", 1, () -> Request.of(elsewhere.name(), other));
      traffic.start();
      long killedAt;
      long promotedAt;
      int promoted;
      try {
        Probe.await("a third of each hot key's limit admitted", 30_000, () -> List.of(FailureMode.values()).stream()
            .allMatch(m -> traffic.count(m.name(), Outcome.ALLOWED) >= LIMIT / 3));
        for (FailureMode m : FailureMode.values()) {
          assertThat(traffic.count(m.name(), Outcome.ALLOWED)).as("[%s] below the limit before the crash", m)
              .isLessThan(LIMIT * 9 / 10);
        }
        killedAt = System.nanoTime();
        promoted = cluster.get().killMaster(victim);
        promotedAt = System.nanoTime();
        Probe.await("a denial by the store on every hot key", 30_000, () -> List.of(FailureMode.values()).stream()
            .allMatch(m -> traffic.count(m.name(), Outcome.DENIED) > 0));
        Thread.sleep(200);
      } finally {
        traffic.close();
      }
      assertThat(promoted).isNotEqualTo(victim);
      List<FailoverFigures> figures = new ArrayList<>();
      for (FailureMode m : FailureMode.values()) {
        FailoverFigures f = FailoverFigures.of(m.name().toLowerCase(java.util.Locale.ROOT), traffic.calls(m.name()),
            killedAt, promotedAt, LIMIT);
        figures.add(f);
        Probe.figures(figuresName, f.line());
      }
      Calls elsewhereCalls = traffic.calls("elsewhere");
      Probe.figures(figuresName, String.format("the replica took over %d ms after the kill; another shard's lane: %s,"
          + " p99 %.1f ms; store errors: %s", Probe.ms(promotedAt - killedAt), elsewhereCalls.summary(),
          elsewhereCalls.latencyMs(0.99), listener.errorKinds()));
      return new Run(figures, elsewhereCalls, listener);
    }
  }

  static Rule rule(String name, FailureMode mode) {
    return Rule.builder(name).window(LIMIT, Duration.ofMinutes(10)).failureMode(mode).build();
  }

  /** The first key {@code hot-<n>} of {@code rule} whose slot the master on {@code port} serves (or does not). */
  static String keyOn(RedisStore store, Rule rule, int port, boolean onIt) {
    for (int n = 0; ; n++) {
      String key = "hot-" + n;
      int slot = SlotHash.getSlot(store.keyName(rule.name(), key));
      if ((cluster.get().masterPortForSlot(slot) == port) == onIt) {
        return key;
      }
    }
  }
}
