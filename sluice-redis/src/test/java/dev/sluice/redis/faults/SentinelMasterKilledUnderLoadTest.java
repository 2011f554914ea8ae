package dev.sluice.redis.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.faults.Traffic.Outcome;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.SentinelGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §5 and §8: a Sentinel-managed master crashes (SIGKILL) under steady traffic. Three lanes of
 * traffic, one per failure mode, each on one hot key driven past its limit across the failover:
 * decisions degrade by their mode while no master answers, callers never get an exception, the
 * store decides on the promoted replica within 5 s of the promotion, and the store admits over
 * the limit at most what the old master acknowledged without replicating.
 */
class SentinelMasterKilledUnderLoadTest {
  /** Its own group: the test kills the master. */
  @RegisterExtension
  static final RedisExtension<SentinelGroup> sentinel = RedisExtension.sentinel(Flavor.REDIS).perClass();

  /** From the promotion, as the Sentinels announce it, to a decision made on the new master. */
  static final long FOLLOW_MS = 5_000;
  static final long LIMIT = 3_000;

  final Rule open = rule("fo.open", FailureMode.OPEN);
  final Rule closed = rule("fo.closed", FailureMode.CLOSED);
  final Rule local = rule("fo.local", FailureMode.LOCAL);

  static Rule rule(String name, FailureMode mode) {
    return Rule.builder(name).window(LIMIT, Duration.ofMinutes(10)).failureMode(mode).build();
  }

  @Test
  void eachFailureModeDecidesWhileNoMasterAnswersAndThePromotedReplicaDecidesWithinFiveSecondsWithoutOverAdmission()
      throws Exception {
    ModeListener listener = new ModeListener(open, closed, local);
    RedisStore store = RedisStore.connect(sentinel.get().uri());
    // The library's defaults (store timeout 250 ms, a local share of 1): what users get.
    try (RateLimiter limiter = Sluice.builder().rules(open, closed, local).store(store).listener(listener).build()) {
      for (Rule r : List.of(open, closed, local)) {
        assertThat(limiter.acquire(Request.of(r.name(), "before")).degraded()).isFalse();
      }
      int oldMaster = sentinel.get().masterPort();
      Traffic traffic = new Traffic(limiter, 1_000);
      for (Rule r : List.of(open, closed, local)) {
        traffic.lane(r.failureMode().name(), 2, () -> Request.of(r.name(), "hot"));
      }
      traffic.start();
      long killedAt;
      long promotedAt;
      int newMaster;
      try {
        Probe.await("a third of each hot key's limit admitted", 30_000, () -> List.of(FailureMode.values()).stream()
            .allMatch(m -> traffic.count(m.name(), Outcome.ALLOWED) >= LIMIT / 3));
        for (FailureMode m : FailureMode.values()) {
          assertThat(traffic.count(m.name(), Outcome.ALLOWED)).as("[%s] below the limit before the crash", m)
              .isLessThan(LIMIT * 9 / 10);
        }
        killedAt = System.nanoTime();
        newMaster = sentinel.get().killMaster();
        promotedAt = System.nanoTime();
        // Each hot key driven past its limit by the new master.
        Probe.await("a denial by the store on every hot key", 30_000, () -> List.of(FailureMode.values()).stream()
            .allMatch(m -> traffic.count(m.name(), Outcome.DENIED) > 0));
        Thread.sleep(200);
      } finally {
        traffic.close();
      }

      assertThat(newMaster).isNotEqualTo(oldMaster);
      List<FailoverFigures> figures = new ArrayList<>();
      for (FailureMode m : FailureMode.values()) {
        FailoverFigures f = FailoverFigures.of(m.name().toLowerCase(java.util.Locale.ROOT), traffic.calls(m.name()),
            killedAt, promotedAt, LIMIT);
        figures.add(f);
        Probe.figures("sentinel-master-killed", f.line());
      }
      Probe.figures("sentinel-master-killed", String.format("Sentinels named the new master %d ms after the kill;"
          + " store errors: %s", Probe.ms(promotedAt - killedAt), listener.errorKinds()));

      for (FailoverFigures f : figures) {
        assertThat(f.afterPromotionMs()).as("[%s] decided on the new master within 5 s of the promotion", f.mode())
            .isLessThanOrEqualTo(FOLLOW_MS);
        assertThat(f.degradedAllowed() + f.degradedDenied()).as("[%s] the outage was seen", f.mode()).isPositive();
        assertThat(f.overAdmission()).as("[%s] admitted beyond the limit: at most what the old master acknowledged"
            + " in its last moments", f.mode()).isLessThanOrEqualTo(f.ackedJustBefore());
      }
      FailoverFigures o = figures.get(0);
      FailoverFigures c = figures.get(1);
      FailoverFigures l = figures.get(2);
      assertThat(o.errors()).as("exceptions thrown to callers of an open rule").isZero();
      assertThat(l.errors()).as("exceptions thrown to callers of a local rule").isZero();
      assertThat(c.errors()).as("exceptions thrown to callers of a closed rule").isZero();
      assertThat(o.degradedDenied()).isZero();
      assertThat(c.degradedAllowed()).isZero();
      assertThat(listener.wrong.get()).as("degraded decisions that did not follow their failure mode").isZero();
      assertThat(listener.storeErrors.get()).as("every degraded decision reported its store error")
          .isEqualTo(listener.degraded.get());

      Decision after = limiter.acquire(Request.of("fo.closed", "after"));
      assertThat(after.allowed()).isTrue();
      assertThat(after.degraded()).isFalse();
      assertThat(sentinel.get().command("EXISTS", store.keyName("fo.closed", "after"))).as("written on the new master")
          .isEqualTo(1L);
    }
  }
}
