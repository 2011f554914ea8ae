package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.StoreException;
import dev.sluice.WindowState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limiter's meters in the application's {@link MeterRegistry}, under the names
 * {@code sluice serve} uses (its {@code SluiceMetrics}, which is bound to the service's
 * configuration reloader and Prometheus registry and so stays in the service):
 * {@code sluice.decisions{rule,outcome}}, {@code sluice.near.limit{rule}},
 * {@code sluice.store.latency{rule}}, {@code sluice.store.errors{rule}},
 * {@code sluice.store.errors.by.kind{kind}}, {@code sluice.denial.cache.answers{rule}},
 * {@code sluice.policy.warnings{kind}}, {@code sluice.config.reloads{result}},
 * {@code sluice.config.last.reload.ok} and {@code sluice.rules}.
 */
final class SluiceMeters implements DecisionListener, ConfigWatcher.Listener {
  private static final String[] OUTCOMES = {"allowed", "denied", "shadow_denied", "degraded"};

  private final MeterRegistry registry;
  private final ConcurrentHashMap<String, Counter[]> outcomes = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> nearLimit = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Timer> latency = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> storeErrors = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> storeErrorKinds = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> cachedDenials = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> policyWarnings = new ConcurrentHashMap<>();
  private final Counter reloadsOk;
  private final Counter reloadsFailed;
  private final AtomicLong lastReloadOk = new AtomicLong(1);
  private final AtomicLong rules = new AtomicLong();

  SluiceMeters(MeterRegistry registry) {
    this.registry = registry;
    this.reloadsOk = Counter.builder("sluice.config.reloads").tag("result", "ok")
        .description("Configuration reloads").register(registry);
    this.reloadsFailed = Counter.builder("sluice.config.reloads").tag("result", "failed")
        .description("Configuration reloads").register(registry);
    io.micrometer.core.instrument.Gauge.builder("sluice.config.last.reload.ok", lastReloadOk, AtomicLong::get)
        .description("1 if the latest configuration reload succeeded, 0 if it was rejected").register(registry);
    io.micrometer.core.instrument.Gauge.builder("sluice.rules", rules, AtomicLong::get)
        .description("Rules in force").register(registry);
    // Each kind from the start, at 0, as the service does: a series that appears only with the
    // first error leaves a rate() alert on it blind to that error.
    for (String kind : new String[] {"timeout", "overloaded", "unavailable", "rejected"}) {
      storeErrorKinds.computeIfAbsent(kind, this::storeErrorKind);
    }
  }

  void rulesInForce(int n) {
    rules.set(n);
  }

  @Override
  public void onReload(boolean ok, int ruleCount) {
    (ok ? reloadsOk : reloadsFailed).increment();
    lastReloadOk.set(ok ? 1 : 0);
    rules.set(ruleCount);
  }

  @Override
  public void onDecision(Request request, Decision d, long storeNanos) {
    String previous = null;
    for (ItemDecision it : d.items()) {
      int outcome = d.degraded() ? 3 : it.shadow() && !it.allowed() ? 2 : d.allowed() ? 0 : 1;
      outcomes.computeIfAbsent(it.rule(), this::outcomeCounters)[outcome].increment();
      if (d.allowed() && nearLimit(it)) {
        nearLimit.computeIfAbsent(it.rule(), r -> Counter.builder("sluice.near.limit").tag("rule", r)
            .description("Admitted items that left a window under 20% of its limit").register(registry)).increment();
      }
      if (!it.rule().equals(previous)) {
        latency.computeIfAbsent(it.rule(), r -> Timer.builder("sluice.store.latency").tag("rule", r)
            .description("Time spent in the store per decision").publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(10_000)).maximumExpectedValue(Duration.ofSeconds(5))
            .register(registry)).record(storeNanos, TimeUnit.NANOSECONDS);
        previous = it.rule();
      }
    }
  }

  @Override
  public void onStoreError(Request request, Throwable error) {
    String kind = error instanceof StoreException || error instanceof IllegalArgumentException ? "rejected"
        : error instanceof TimeoutException || error.getClass().getSimpleName().contains("Timeout") ? "timeout"
        : error instanceof java.util.concurrent.RejectedExecutionException ? "overloaded" : "unavailable";
    storeErrorKinds.computeIfAbsent(kind, this::storeErrorKind).increment();
    String previous = null;
    for (var it : request.items()) {
      if (!it.rule().equals(previous)) {
        storeErrors.computeIfAbsent(it.rule(), r -> Counter.builder("sluice.store.errors").tag("rule", r)
            .description("Store calls that failed or timed out").register(registry)).increment();
        previous = it.rule();
      }
    }
  }

  @Override
  public void onCachedDenial(String rule, String key) {
    cachedDenials.computeIfAbsent(rule, r -> Counter.builder("sluice.denial.cache.answers").tag("rule", r)
        .description("Items denied from the denial cache, without a store call").register(registry)).increment();
  }

  @Override
  public void onPolicyWarning(String kind) {
    policyWarnings.computeIfAbsent(kind, k -> Counter.builder("sluice.policy.warnings").tag("kind", k)
        .description("Problems of the policy path, each counted, logged at most once every 10 s per kind")
        .register(registry)).increment();
  }

  private Counter storeErrorKind(String kind) {
    return Counter.builder("sluice.store.errors.by.kind").tag("kind", kind)
        .description("Store calls that failed or timed out, by kind").register(registry);
  }

  private static boolean nearLimit(ItemDecision it) {
    for (WindowState w : it.windows()) {
      if (w.remaining() * 5 < w.limit()) {
        return true;
      }
    }
    return false;
  }

  private Counter[] outcomeCounters(String rule) {
    Counter[] c = new Counter[OUTCOMES.length];
    for (int i = 0; i < OUTCOMES.length; i++) {
      c[i] = Counter.builder("sluice.decisions").tag("rule", rule).tag("outcome", OUTCOMES[i])
          .description("Decisions per rule by outcome").register(registry);
    }
    return c;
  }
}
