package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.Sleeper;
import dev.sluice.WindowState;
import java.time.Duration;
import java.util.function.Supplier;

/** The blocking acquire: retries as the decisions say, within a budget of time. */
final class Blocking {
  private Blocking() {}

  static Decision acquire(Supplier<Decision> attempt, Duration timeout, Sleeper sleeper) throws InterruptedException {
    long budget = timeout.toMillis();
    while (true) {
      Decision d = attempt.get();
      if (d.allowed()) {
        if (d.waitMs() > 0) {
          sleeper.sleep(d.waitMs());
        }
        return d;
      }
      long retry = d.retryAfterMs();
      if (retry == WindowState.NEVER || retry > budget || d.degraded() && retry == 0) {
        return d;
      }
      // Sleep exactly as long as the decision says; the retry is then expected to pass unless
      // other traffic took the room meanwhile.
      sleeper.sleep(retry);
      budget -= retry;
    }
  }
}
