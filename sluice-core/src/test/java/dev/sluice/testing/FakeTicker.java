package dev.sluice.testing;

import dev.sluice.Sleeper;
import dev.sluice.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker moved by hand; also a {@link Sleeper} that advances it instead of sleeping. */
public final class FakeTicker implements Ticker, Sleeper {
  private final AtomicLong micros;

  public FakeTicker() {
    this(1_700_000_000_000_000L);
  }

  public FakeTicker(long startMicros) {
    micros = new AtomicLong(startMicros);
  }

  @Override
  public long nowMicros() {
    return micros.get();
  }

  public FakeTicker advance(Duration d) {
    micros.addAndGet(d.toNanos() / 1000);
    return this;
  }

  public FakeTicker advanceMillis(long ms) {
    micros.addAndGet(ms * 1000);
    return this;
  }

  public FakeTicker advanceMicros(long us) {
    micros.addAndGet(us);
    return this;
  }

  public void setMicros(long us) {
    micros.set(us);
  }

  @Override
  public void sleep(long millis) {
    advanceMillis(millis);
  }
}
