package dev.sluice.bench;

import java.time.Duration;
import java.util.List;

/**
 * The rules measured. Each has a "real" form, under which a hot benchmark loop is almost always
 * denied (a decision is then mostly a read), and an "admitting" form with limits far above what
 * the loop can reach, so almost every decision is admitted and every window is written.
 */
public enum RuleShape {
  /** 100 per second. */
  ONE_WINDOW(List.of(new Limit(100, Duration.ofSeconds(1)))),
  /** 1,000,000,000 per second: never binds in a benchmark loop. */
  ONE_WINDOW_ADMITTING(List.of(new Limit(1_000_000_000, Duration.ofSeconds(1)))),
  /** 20 per minute and 5 per 3 seconds: the motivating rule. */
  TWO_WINDOWS(List.of(new Limit(20, Duration.ofSeconds(60)), new Limit(5, Duration.ofSeconds(3)))),
  /**
   * 100,000,000 per second and 20,000,000 per 100 ms: two windows, a long one and a burst one
   * (like 20/60s + 5/3s), that never bind. The periods are short on purpose: an exact log keeps
   * every unit admitted within its longest window, and a minute of admissions at tens of millions
   * per second would measure the memory system rather than the limiter.
   */
  TWO_WINDOWS_ADMITTING(List.of(new Limit(100_000_000, Duration.ofSeconds(1)),
      new Limit(20_000_000, Duration.ofMillis(100))));

  /** {@code limit} units per {@code period}. */
  public record Limit(long limit, Duration period) {}

  private final List<Limit> limits;

  RuleShape(List<Limit> limits) {
    this.limits = limits;
  }

  public List<Limit> limits() {
    return limits;
  }

  public boolean singleWindow() {
    return limits.size() == 1;
  }
}
