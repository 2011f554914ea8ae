package dev.sluice.server.cli;

import dev.sluice.Ticker;

/**
 * The trace's clock, for the memory store: its sweeps of idle keys must judge idleness by trace
 * time, not by the wall clock (which would find every key of an old trace idle and forget it).
 */
final class ReplayClock implements Ticker {
  private long micros;

  void set(long nowMicros) {
    micros = nowMicros;
  }

  @Override
  public long nowMicros() {
    return micros;
  }
}
