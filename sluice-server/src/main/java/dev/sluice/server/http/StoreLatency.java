package dev.sluice.server.http;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * The time spent in the store per decision, over every rule, from the metrics' timer
 * ({@code sluice_store_latency_seconds}): decisions timed, their mean since the start, and the
 * slowest of the timer's recent window.
 */
record StoreLatency(long count, double meanMicros, double maxMicros) {
  static final StoreLatency NONE = new StoreLatency(0, 0, 0);

  static StoreLatency of(MeterRegistry registry) {
    if (registry == null) {
      return NONE;
    }
    long count = 0;
    double total = 0;
    double max = 0;
    for (Timer t : registry.find("sluice.store.latency").timers()) {
      count += t.count();
      total += t.totalTime(TimeUnit.MICROSECONDS);
      max = Math.max(max, t.max(TimeUnit.MICROSECONDS));
    }
    return new StoreLatency(count, count == 0 ? 0 : total / count, max);
  }
}
