package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.Request;
import dev.sluice.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether the store's calls are failing, as the decisions see them. A store can answer
 * {@code PING} while it fails every decision — Redis over its {@code maxmemory} with
 * {@code noeviction} refuses every write with an OOM error — so readiness asks this too.
 *
 * <p>The store is <em>failing</em> when its calls have failed without a single success for at
 * least {@link #FAILING_AFTER} (and at least {@link #MIN_FAILURES} calls), and the latest failure
 * is at most {@link #EVIDENCE_TTL} old. The last condition lets an instance that a load balancer
 * took out of rotation, and so receives no decisions, come back to try again: after that long
 * without a failed call, readiness rests on {@code PING} alone. One successful call ends the
 * failure at once.
 *
 * <p>Called on every decision: a success costs a volatile read, and writes only when it ends a
 * failure; the clock is read only on failures.
 */
public final class StoreHealth implements DecisionListener {
  /** How long calls must fail without a success before the store counts as failing. */
  public static final Duration FAILING_AFTER = Duration.ofSeconds(1);

  /** Failed calls needed besides: a single slow call is not an outage. */
  public static final int MIN_FAILURES = 3;

  /** How long a failure stays evidence when no call follows it. */
  public static final Duration EVIDENCE_TTL = Duration.ofSeconds(10);

  private static final long NONE = Long.MIN_VALUE;

  private final Ticker ticker;
  /** When the current run of failures began (no success since), or {@link #NONE}. */
  private volatile long failingSince = NONE;
  private volatile long lastFailure = NONE;
  private final AtomicLong failures = new AtomicLong();

  public StoreHealth(Ticker ticker) {
    this.ticker = ticker;
  }

  /** The state readiness reports. */
  public record Status(boolean failing, long failedCalls, Duration failingFor) {}

  @Override
  public void onDecision(Request request, Decision decision, long storeNanos) {
    // A degraded decision is a failed call, told through onStoreError.
    if (!decision.degraded() && failingSince != NONE) {
      failingSince = NONE;
      failures.set(0);
    }
  }

  @Override
  public void onStoreError(Request request, Throwable error) {
    long now = ticker.nowMicros();
    lastFailure = now;
    if (failingSince == NONE) {
      failingSince = now;
    }
    failures.incrementAndGet();
  }

  /** Whether the store is failing now, as the class says, and for how long. */
  public Status status() {
    long since = failingSince;
    long last = lastFailure;
    long n = failures.get();
    if (since == NONE || last == NONE || n < MIN_FAILURES) {
      return new Status(false, n, Duration.ZERO);
    }
    long now = ticker.nowMicros();
    long spanMicros = last - since;
    boolean failing = spanMicros >= FAILING_AFTER.toNanos() / 1000 && now - last <= EVIDENCE_TTL.toNanos() / 1000;
    return new Status(failing, n, Duration.ofNanos(Math.max(0, now - since) * 1000));
  }
}
