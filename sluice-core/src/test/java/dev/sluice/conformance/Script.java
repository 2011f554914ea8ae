package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.WindowState;
import java.util.List;

/** A scripted trace of one (rule, key): each step states exactly what the store must answer. */
final class Script {
  private final RateLimiter limiter;
  private final String rule;
  private final String key;

  Script(RateLimiter limiter, String rule, String key) {
    this.limiter = limiter;
    this.rule = rule;
    this.key = key;
  }

  /** What a decision says at the request level, plus the one item's reason and windows. */
  record Observed(boolean allowed, DenyReason reason, long retryAfterMs, long waitMs, List<WindowState> windows) {}

  static Outcome allowed() {
    return new Outcome(true, DenyReason.NONE, 0, 0);
  }

  static Outcome allowedAfterWait(long waitMs) {
    return new Outcome(true, DenyReason.NONE, 0, waitMs);
  }

  static Outcome denied(DenyReason reason, long retryAfterMs) {
    return new Outcome(false, reason, retryAfterMs, 0);
  }

  record Outcome(boolean allowed, DenyReason reason, long retryAfterMs, long waitMs) {}

  /** Requests {@code cost} at {@code ms} after the base time and checks every number of the answer. */
  Decision expect(long ms, long cost, Outcome outcome, WindowState... windows) {
    Decision d = limiter.acquire(Request.of(Item.of(rule, key, cost)).atMillis(StoreConformance.BASE_MS + ms));
    ItemDecision item = d.items().get(0);
    assertThat(new Observed(d.allowed(), item.reason(), d.retryAfterMs(), d.waitMs(), item.windows()))
        .as("t=%d ms, cost %d", ms, cost)
        .isEqualTo(new Observed(outcome.allowed(), outcome.reason(), outcome.retryAfterMs(), outcome.waitMs(),
            List.of(windows)));
    return d;
  }
}
