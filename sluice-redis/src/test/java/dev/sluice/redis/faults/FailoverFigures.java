package dev.sluice.redis.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.faults.Traffic.Calls;
import dev.sluice.redis.faults.Traffic.Outcome;
import java.util.concurrent.TimeUnit;

/**
 * What one lane of traffic on one hot key saw across a failover: how long no store decided, how
 * soon after the promotion the store decided again, what callers got, and how many more than
 * the limit the store admitted (writes the promoted replica never received).
 */
record FailoverFigures(String mode, long noStoreMs, long afterPromotionMs, String callers, long storeAdmitted,
    long limit, long ackedJustBefore, long errors, long degradedAllowed, long degradedDenied) {

  /**
   * @param killedAt {@code System.nanoTime()} just before the master was killed
   * @param promotedAt when the test kit saw the replica promoted
   */
  static FailoverFigures of(String mode, Calls calls, long killedAt, long promotedAt, long limit) {
    long firstFailure = calls.firstFailureEndAfter(killedAt);
    assertThat(firstFailure).as("[%s] a call not decided by the store after the kill: the outage was seen", mode)
        .isPositive();
    long lastBefore = calls.lastStoreEndBefore(firstFailure);
    long firstAfter = calls.firstStoreEndAfter(firstFailure);
    assertThat(firstAfter).as("[%s] a decision by the store after the outage", mode).isPositive();
    long window = TimeUnit.MILLISECONDS.toNanos(100);
    long acked = calls.filter(i -> calls.outcomes[(int) i] == Outcome.ALLOWED
        && calls.ends[(int) i] > lastBefore - window && calls.ends[(int) i] <= lastBefore).size();
    return new FailoverFigures(mode, Probe.ms(firstAfter - lastBefore), Probe.ms(firstAfter - promotedAt),
        calls.summary(), calls.count(Outcome.ALLOWED), limit, acked, calls.count(Outcome.ERROR),
        calls.count(Outcome.DEGRADED_ALLOWED), calls.count(Outcome.DEGRADED_DENIED));
  }

  long overAdmission() {
    return storeAdmitted - limit;
  }

  String line() {
    return String.format("[%s] no store decision for %d ms, the first from the new master %d ms after the promotion;"
        + " %s; the store admitted %d on a key of limit %d (over-admission %d; %d admitted in the last 100 ms before"
        + " the outage)", mode, noStoreMs, afterPromotionMs, callers, storeAdmitted, limit, overAdmission(),
        ackedJustBefore);
  }
}
