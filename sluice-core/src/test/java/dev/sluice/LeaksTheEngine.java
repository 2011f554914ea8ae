package dev.sluice;

import dev.sluice.internal.Engine;

/**
 * A deliberately broken API type, for {@code PublicApiTest}: in an exported package, it names the
 * internal engine in a public signature. It is a test class, so the module's API never holds it.
 */
public final class LeaksTheEngine {
  private LeaksTheEngine() {}

  public static Engine engine(RateLimiter limiter) {
    return (Engine) limiter;
  }
}
