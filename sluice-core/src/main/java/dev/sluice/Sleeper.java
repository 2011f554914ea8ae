package dev.sluice;

/** How {@link RateLimiter#acquireBlocking} waits; tests inject one that advances a fake clock. */
@FunctionalInterface
public interface Sleeper {
  void sleep(long millis) throws InterruptedException;

  static Sleeper system() {
    return millis -> {
      if (millis > 0) {
        Thread.sleep(millis);
      }
    };
  }
}
