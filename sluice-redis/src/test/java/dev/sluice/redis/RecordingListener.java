package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.Request;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** What the limiter tells its metrics: degraded decisions and store errors. */
final class RecordingListener implements DecisionListener {
  final AtomicInteger decisions = new AtomicInteger();
  final AtomicInteger degraded = new AtomicInteger();
  final List<Throwable> storeErrors = new CopyOnWriteArrayList<>();

  @Override
  public void onDecision(Request request, Decision decision, long storeNanos) {
    decisions.incrementAndGet();
    if (decision.degraded()) {
      degraded.incrementAndGet();
    }
  }

  @Override
  public void onStoreError(Request request, Throwable error) {
    storeErrors.add(error);
  }

  void clear() {
    decisions.set(0);
    degraded.set(0);
    storeErrors.clear();
  }
}
