package dev.sluice;

/**
 * A source of time for the memory store: microseconds since the Unix epoch, never going
 * backwards. Tests inject a fake one.
 */
@FunctionalInterface
public interface Ticker {

  long nowMicros();

  /**
   * The system ticker: anchored once to the wall clock (so fixed windows align to the epoch) and
   * advanced by {@link System#nanoTime()} (so it is monotonic, whatever the wall clock does).
   */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }
}

final class SystemTicker implements Ticker {
  static final SystemTicker INSTANCE = new SystemTicker();

  private final long originMicros;
  private final long originNanos;

  private SystemTicker() {
    java.time.Instant now = java.time.Instant.now();
    this.originNanos = System.nanoTime();
    this.originMicros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
  }

  @Override
  public long nowMicros() {
    return originMicros + (System.nanoTime() - originNanos) / 1000;
  }
}
