package dev.sluice.redis.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.faults.Traffic.Calls;
import dev.sluice.redis.faults.Traffic.Outcome;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §8: the server restarts without persistence in the middle of steady traffic, and comes
 * back empty: no counters, no library of functions. No caller gets an exception, the store
 * decides again by itself (the library is missing: the script decides until it is loaded
 * again), counts start afresh, and no decision is counted twice.
 */
class RestartedEmptyMidTrafficTest {
  /** Its own server: the test restarts it. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  static final long LIMIT = 1_000_000;
  /** Consumed on each hot key before the restart: tells a count of the old server from one of the new. */
  static final long BEFORE = LIMIT / 2;

  final Rule open = rule("re.open", FailureMode.OPEN);
  final Rule closed = rule("re.closed", FailureMode.CLOSED);
  final Rule local = rule("re.local", FailureMode.LOCAL);

  static Rule rule(String name, FailureMode mode) {
    return Rule.builder(name).window(LIMIT, Duration.ofMinutes(10)).failureMode(mode).build();
  }

  volatile boolean switched;

  @Test
  void noCallerSeesAnErrorCountsStartAfreshAndNoDecisionIsCountedTwice() throws Exception {
    ModeListener listener = new ModeListener(open, closed, local);
    RedisStore store = RedisStore.connect(redis.get().uri());
    List<Rule> rules = List.of(open, closed, local);
    try (RateLimiter limiter = Sluice.builder().rules(open, closed, local).store(store).listener(listener).build()) {
      // The first calls load the library and warm the client; on a loaded machine they can outlast
      // the store timeout and be decided by the failure mode, so they go to a key the test ignores.
      for (Rule r : rules) {
        Probe.await("a decision by the server on " + r.name(), 10_000,
            () -> !limiter.acquire(Request.of(r.name(), "warm-up")).degraded());
      }
      for (Rule r : rules) {
        Decision d = limiter.acquire(Request.of(r.name(), "hot", BEFORE));
        assertThat(d.allowed()).as("%s before the restart: %s", r.name(), d).isTrue();
      }
      long fcallsBefore = redis.get().commandCalls("fcall");
      Traffic traffic = new Traffic(limiter, 500);
      for (Rule r : rules) {
        // The hot key across the restart, then, once the new server decides, a key it alone ever saw.
        traffic.lane(r.name(), 2, () -> Request.of(r.name(), switched ? "after" : "hot"));
      }
      traffic.start();
      long stoppedAt;
      long backAt;
      long recoveredMs;
      try {
        Probe.await("traffic decided by the server", 10_000,
            () -> rules.stream().allMatch(r -> traffic.count(r.name(), Outcome.ALLOWED) >= 300));
        stoppedAt = System.nanoTime();
        redis.get().stop();
        redis.get().restart();
        backAt = System.nanoTime();
        long[] served = rules.stream().mapToLong(r -> traffic.count(r.name(), Outcome.ALLOWED)).toArray();
        recoveredMs = Probe.await("every lane decided by the new server", 10_000, () -> {
          for (int i = 0; i < rules.size(); i++) {
            if (traffic.count(rules.get(i).name(), Outcome.ALLOWED) <= served[i]) {
              return false;
            }
          }
          return true;
        });
        Thread.sleep(500);
        switched = true;
        Thread.sleep(1_000);
      } finally {
        traffic.close();
      }

      for (Rule r : rules) {
        Calls calls = traffic.calls(r.name());
        Calls hot = calls.onKey("hot");
        Calls after = calls.onKey("after");
        // The new server's admissions on the hot key: those that left more than the old server ever did.
        long[] fresh = hot.filter(i -> hot.outcomes[(int) i] == Outcome.ALLOWED && hot.remaining[(int) i] > LIMIT - BEFORE)
            .remaining;
        long countedHot = LIMIT - peek(limiter, r, "hot");
        long countedAfter = LIMIT - peek(limiter, r, "after");
        long seenAfter = after.count(Outcome.ALLOWED);
        long overCount = countedHot - fresh.length;
        Probe.figures("restarted-empty", String.format("[%s] %s; server down %d ms, decided by the new server %d ms"
            + " after it answered; hot key: the new server counted %d, callers saw %d of them admitted (counted, unseen"
            + " %d; degraded calls %d); key used after recovery: counted %d, seen admitted %d (%s)",
            r.failureMode().name().toLowerCase(java.util.Locale.ROOT), calls.summary(), Probe.ms(backAt - stoppedAt),
            recoveredMs, countedHot, fresh.length, overCount, hot.degraded(), countedAfter, seenAfter, after.summary()));

        assertThat(calls.count(Outcome.ERROR)).as("[%s] exceptions thrown to callers: %s", r.name(),
            traffic.lastError(r.name())).isZero();
        // A quick restart may go unnoticed by callers (the client holds their calls while it
        // reconnects): the new server's fresh counts are what shows it.
        assertThat(fresh).as("[%s] the new server decided", r.name()).isNotEmpty();
        // Each admission the new server made left a different remaining: none was answered twice.
        assertThat(Arrays.stream(fresh).distinct().count()).as("[%s] distinct counts seen", r.name())
            .isEqualTo(fresh.length);
        // Counts start afresh: the new server's count is what it admitted, and at most the calls
        // its callers had already given up on (sent again by the client after reconnecting).
        assertThat(overCount).as("[%s] counted on the hot key beyond what callers saw admitted", r.name())
            .isBetween(0L, hot.degraded());
        assertThat(after.size()).as("[%s] traffic on the key used after recovery", r.name()).isPositive();
        assertThat(countedAfter).as("[%s] counted on a key used only after recovery (%d degraded calls)", r.name(),
            after.degraded()).isBetween(seenAfter, seenAfter + after.degraded());
        if (after.degraded() == 0) {
          assertThat(countedAfter).as("[%s] exactly the admissions callers saw", r.name()).isEqualTo(seenAfter);
        }
      }
      assertThat(listener.wrong.get()).as("degraded decisions that did not follow their failure mode").isZero();
      assertThat(String.valueOf(redis.get().command("FUNCTION", "LIST"))).as("the library, loaded again")
          .contains("sluice_");
      assertThat(redis.get().commandCalls("fcall")).as("FCALLs on the new server (counts restart at 0)")
          .isPositive();
      Probe.figures("restarted-empty", "store errors: " + listener.errorKinds() + "; FCALLs before the restart "
          + fcallsBefore);
    }
  }

  /** The remaining of {@code key}'s window, by a request of cost 0 (consumes nothing). */
  static long peek(RateLimiter limiter, Rule r, String key) {
    Decision d = limiter.acquire(Request.of(r.name(), key, 0));
    assertThat(d.degraded()).isFalse();
    return d.items().get(0).windows().get(0).remaining();
  }
}
