package dev.sluice.spring.actuate;

import dev.sluice.RateLimiter;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** Up when the limiter's store answers a ping within 2 seconds; the memory store always does. */
public final class SluiceHealthIndicator implements HealthIndicator {
  private final RateLimiter limiter;

  public SluiceHealthIndicator(RateLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  public Health health() {
    boolean up;
    String error = null;
    try {
      up = Boolean.TRUE.equals(limiter.ping().toCompletableFuture().get(2, TimeUnit.SECONDS));
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      up = false;
      error = e.getClass().getSimpleName();
    }
    Health.Builder b = up ? Health.up() : Health.down().withDetail("store", "unreachable");
    if (error != null) {
      b.withDetail("error", error);
    }
    return b.withDetail("rules", limiter.rules().size()).build();
  }
}
