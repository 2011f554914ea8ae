package dev.sluice.redis.faults;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.DenyReason;
import dev.sluice.FailureMode;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Checks every degraded decision against its rules' failure modes, and tallies the store errors
 * behind them by kind.
 */
final class ModeListener implements DecisionListener {
  private final Map<String, FailureMode> modes = new ConcurrentHashMap<>();
  final AtomicInteger degraded = new AtomicInteger();
  final AtomicInteger storeErrors = new AtomicInteger();
  /** Degraded items that did not follow their rule's failure mode. */
  final AtomicInteger wrong = new AtomicInteger();
  private final Map<String, AtomicInteger> kinds = new ConcurrentHashMap<>();

  ModeListener(Rule... rules) {
    for (Rule r : rules) {
      modes.put(r.name(), r.failureMode());
    }
  }

  @Override
  public void onDecision(Request request, Decision decision, long storeNanos) {
    if (!decision.degraded()) {
      return;
    }
    degraded.incrementAndGet();
    for (ItemDecision d : decision.items()) {
      FailureMode m = modes.get(d.rule());
      boolean follows = switch (m) {
        case OPEN -> d.allowed() && d.reason() == DenyReason.NONE && d.windows().isEmpty();
        case CLOSED -> !d.allowed() && d.reason() == DenyReason.STORE_UNAVAILABLE;
        // Decided by the in-process limiter: its windows, and never "store unavailable".
        case LOCAL -> !d.windows().isEmpty() && d.reason() != DenyReason.STORE_UNAVAILABLE;
      };
      if (!follows) {
        wrong.incrementAndGet();
      }
    }
  }

  @Override
  public void onStoreError(Request request, Throwable error) {
    storeErrors.incrementAndGet();
    kinds.computeIfAbsent(kind(error), k -> new AtomicInteger()).incrementAndGet();
  }

  /** "TimeoutException 12, RedisCommandTimeoutException 3": the store errors by kind, most frequent first. */
  String errorKinds() {
    Map<String, Integer> sorted = new TreeMap<>();
    kinds.forEach((k, v) -> sorted.put(k, v.get()));
    return sorted.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue())
        .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
  }

  private static String kind(Throwable e) {
    String name = e.getClass().getSimpleName();
    String m = e.getMessage();
    if (m != null && !m.isEmpty() && Character.isUpperCase(m.charAt(0)) && m.indexOf(' ') > 0
        && m.substring(0, m.indexOf(' ')).chars().allMatch(Character::isUpperCase)) {
      // A server error's code: OOM, NOPERM, READONLY, LOADING …
      return name + "(" + m.substring(0, m.indexOf(' ')) + ")";
    }
    return name;
  }

  void clear() {
    degraded.set(0);
    storeErrors.set(0);
    wrong.set(0);
    kinds.clear();
  }
}
