package dev.sluice.server.metrics;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.WindowState;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.StoreHealth;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.spi.Store;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The service's metrics (SPEC §9), fed by the limiter as a {@link DecisionListener} and by the
 * configuration reloader. In Prometheus:
 *
 * <ul>
 *   <li>{@code sluice_decisions_total{rule,outcome}} — per rule of every decided item:
 *       {@code allowed} (the request was admitted), {@code denied} (the request was denied),
 *       {@code shadow_denied} (a shadow rule would have denied), {@code degraded} (the store
 *       failed and the failure mode decided);
 *   <li>{@code sluice_near_limit_total{rule}} — admitted items that left some window under 20%
 *       of its limit;
 *   <li>{@code sluice_store_latency_seconds{rule}} — histogram of the time spent in the store per
 *       decision, for each rule of the request;
 *   <li>{@code sluice_store_errors_total{rule}} — store calls that failed or timed out;
 *   <li>{@code sluice_denial_cache_answers_total{rule}} — items a remote store had just denied,
 *       denied again by this instance without a store call (the denial cache);
 *   <li>{@code sluice_policy_warnings_total{kind}} — problems of the policy path that requests can
 *       cause, logged at most once every 10 s per kind: {@code ban_not_recorded},
 *       {@code cache_full}, {@code record_unreadable}, {@code read_failed} (see
 *       {@link DecisionListener#onPolicyWarning});
 *   <li>{@code sluice_policy_records_lost_total{kind}} — records ({@code limit}, {@code ban},
 *       {@code list_entry}) this instance held that a reset of the store took away;
 *   <li>{@code sluice_store_errors_by_kind_total{kind}} — the same calls by kind: {@code timeout},
 *       {@code overloaded} (not made: too many calls waited), {@code unavailable} (any other
 *       outage), each of which degraded a decision, and {@code rejected} (the store could not
 *       decide the request, which failed instead: see {@code docs/failure.md});
 *   <li>{@code sluice_config_reloads_total{result="ok"|"failed"}},
 *       {@code sluice_config_last_reload_ok} (1 or 0) and {@code sluice_rules} (rules in force);
 *   <li>with the memory store ({@link #watchStore}): {@code sluice_store_keys{rule}} (keys held),
 *       {@code sluice_store_bytes} (heap bytes its keys hold), {@code sluice_store_max_keys},
 *       {@code sluice_store_max_bytes}, and {@code sluice_store_full_total{rule}} (items denied
 *       {@code store_full}: the rule's share of the store is full);
 *   <li>leased mode's, {@code sluice_lease_*}: see {@link LeaseMetrics}.
 * </ul>
 */
public final class SluiceMetrics implements DecisionListener, ConfigReloader.Listener {
  /** Outcomes of {@code sluice_decisions_total}. */
  public static final String ALLOWED = "allowed";
  public static final String DENIED = "denied";
  public static final String SHADOW_DENIED = "shadow_denied";
  public static final String DEGRADED = "degraded";

  private final MeterRegistry registry;
  private final ConcurrentHashMap<String, Counter[]> outcomes = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> nearLimit = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> storeErrors = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> storeErrorKinds = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Timer> latency = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> cachedDenials = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> policyWarnings = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> policyLost = new ConcurrentHashMap<>();
  private final LeaseMetrics leases;
  private final Counter reloadsOk;
  private final Counter reloadsFailed;
  private final AtomicLong lastReloadOk = new AtomicLong(1);
  private final AtomicLong rules = new AtomicLong();
  /**
   * Adds {@code sluice_store_failing}: 1 while the store's calls have failed without a success
   * (what makes {@code /readyz} answer 503 besides a failed ping), so that an alert can see an
   * instance its balancer has taken out.
   */
  public void watchHealth(StoreHealth health) {
    Gauge.builder("sluice.store.failing", health, h -> h.status().failing() ? 1 : 0).strongReference(true)
        .description("1 while the store's calls fail without a success (the instance is unready)").register(registry);
  }

  private volatile MemoryStore memoryStore;
  /** The memory store's per-rule meters, for the rules in force. */
  private final Map<String, List<Meter>> storeMeters = new HashMap<>();

  public SluiceMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.leases = new LeaseMetrics(registry);
    this.reloadsOk = Counter.builder("sluice.config.reloads").tag("result", "ok")
        .description("Configuration reloads").register(registry);
    this.reloadsFailed = Counter.builder("sluice.config.reloads").tag("result", "failed")
        .description("Configuration reloads").register(registry);
    Gauge.builder("sluice.config.last.reload.ok", lastReloadOk, AtomicLong::get)
        .description("1 if the latest configuration reload succeeded, 0 if it was rejected").register(registry);
    Gauge.builder("sluice.rules", rules, AtomicLong::get).description("Rules in force").register(registry);
    // Each kind from the start, at 0: a series that appears only with the first error leaves
    // rate() and alerts on it blind until then.
    for (String kind : List.of(TIMEOUT, OVERLOADED, UNAVAILABLE, REJECTED)) {
      storeErrorKinds.computeIfAbsent(kind, this::storeErrorKind);
    }
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** Records the configuration first put in force. */
  public void configLoaded(ServiceConfig config) {
    rules.set(config.rules().size());
    storeMetersFor(config.rules());
  }

  @Override
  public void onReload(boolean ok, ServiceConfig config, String error) {
    (ok ? reloadsOk : reloadsFailed).increment();
    lastReloadOk.set(ok ? 1 : 0);
    rules.set(config.rules().size());
    storeMetersFor(config.rules());
  }

  /**
   * Adds the store's meters if it is a memory store (a Redis store's keyspace is measured by
   * {@code sluice keys stats}); its per-rule meters follow the rules in force.
   */
  public void watchStore(Store store) {
    if (!(store instanceof MemoryStore m)) {
      return;
    }
    memoryStore = m;
    Gauge.builder("sluice.store.bytes", m, MemoryStore::bytes).strongReference(true)
        .description("Heap bytes held by the memory store's keys").register(registry);
    Gauge.builder("sluice.store.max.bytes", m, MemoryStore::maxBytes).strongReference(true)
        .description("The most heap bytes the memory store's keys may hold").register(registry);
    Gauge.builder("sluice.store.max.keys", m, MemoryStore::maxKeys).strongReference(true)
        .description("The most keys the memory store holds").register(registry);
  }

  private synchronized void storeMetersFor(RuleSet inForce) {
    MemoryStore m = memoryStore;
    if (m == null) {
      return;
    }
    for (Iterator<Map.Entry<String, List<Meter>>> it = storeMeters.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, List<Meter>> e = it.next();
      if (inForce.get(e.getKey()) == null) {
        e.getValue().forEach(registry::remove);
        it.remove();
      }
    }
    for (Rule r : inForce.rules()) {
      storeMeters.computeIfAbsent(r.name(), name -> List.of(
          Gauge.builder("sluice.store.keys", m, s -> s.keys(name)).tag("rule", name).strongReference(true)
              .description("Keys the memory store holds per rule").register(registry),
          FunctionCounter.builder("sluice.store.full", m, s -> s.fullDenials(name)).tag("rule", name)
              .description("Items denied store_full: the rule's share of the memory store was full")
              .register(registry)));
    }
  }

  @Override
  public void onLeaseTake(String rule, long units) {
    leases.take(rule, units);
  }

  @Override
  public void onLeaseGiveBack(String rule, long units) {
    leases.giveBack(rule, units);
  }

  @Override
  public void onLeasesHeld(int keys, long units) {
    leases.held(keys, units);
  }

  @Override
  public void onLeadership(boolean leads) {
    leases.leadership(leads);
  }

  @Override
  public void onLeaseRebalance(int keys) {
    leases.rebalance();
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

  @Override
  public void onPolicyRecordsLost(String kind, long count) {
    policyLost.computeIfAbsent(kind, k -> Counter.builder("sluice.policy.records.lost").tag("kind", k)
        .description("Policy records this instance held that a reset of the store took away")
        .register(registry)).increment(count);
  }

  @Override
  public void onDecision(Request request, Decision d, long storeNanos) {
    String previousRule = null;
    for (ItemDecision it : d.items()) {
      String outcome;
      if (d.degraded()) {
        outcome = DEGRADED;
      } else if (it.shadow() && !it.allowed()) {
        outcome = SHADOW_DENIED;
      } else {
        outcome = d.allowed() ? ALLOWED : DENIED;
      }
      outcomes.computeIfAbsent(it.rule(), this::outcomeCounters)[index(outcome)].increment();
      if (d.allowed() && nearLimit(it)) {
        nearLimit.computeIfAbsent(it.rule(), r -> Counter.builder("sluice.near.limit").tag("rule", r)
            .description("Admitted items that left a window under 20% of its limit").register(registry)).increment();
      }
      // Requests usually repeat one rule for several keys: time the store once per rule.
      if (!it.rule().equals(previousRule)) {
        latency.computeIfAbsent(it.rule(), r -> Timer.builder("sluice.store.latency").tag("rule", r)
            .description("Time spent in the store per decision").publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(10_000)).maximumExpectedValue(Duration.ofSeconds(5))
            .register(registry)).record(storeNanos, TimeUnit.NANOSECONDS);
        previousRule = it.rule();
      }
    }
  }

  private Counter storeErrorKind(String kind) {
    return Counter.builder("sluice.store.errors.by.kind").tag("kind", kind)
        .description("Store calls that failed or timed out, by kind").register(registry);
  }

  /** Kinds of {@code sluice_store_errors_by_kind_total}. */
  public static final String TIMEOUT = "timeout";
  public static final String OVERLOADED = "overloaded";
  public static final String UNAVAILABLE = "unavailable";
  public static final String REJECTED = "rejected";

  /** The kind of a store error, as the limiter reports it (see {@code DecisionListener#onStoreError}). */
  static String kind(Throwable error) {
    if (error instanceof dev.sluice.StoreException || error instanceof IllegalArgumentException) {
      return REJECTED;
    }
    if (error instanceof java.util.concurrent.TimeoutException
        || error instanceof io.lettuce.core.RedisCommandTimeoutException) {
      return TIMEOUT;
    }
    return error instanceof java.util.concurrent.RejectedExecutionException ? OVERLOADED : UNAVAILABLE;
  }

  @Override
  public void onStoreError(Request request, Throwable error) {
    storeErrorKinds.computeIfAbsent(kind(error), this::storeErrorKind).increment();
    String previous = null;
    for (var it : request.items()) {
      if (!it.rule().equals(previous)) {
        storeErrors.computeIfAbsent(it.rule(), r -> Counter.builder("sluice.store.errors").tag("rule", r)
            .description("Store calls that failed or timed out").register(registry)).increment();
        previous = it.rule();
      }
    }
  }

  private static boolean nearLimit(ItemDecision it) {
    for (WindowState w : it.windows()) {
      // remaining < 20% of limit, in integers.
      if (w.remaining() * 5 < w.limit()) {
        return true;
      }
    }
    return false;
  }

  private static int index(String outcome) {
    return switch (outcome) {
      case ALLOWED -> 0;
      case DENIED -> 1;
      case SHADOW_DENIED -> 2;
      default -> 3;
    };
  }

  private Counter[] outcomeCounters(String rule) {
    String[] names = {ALLOWED, DENIED, SHADOW_DENIED, DEGRADED};
    Counter[] c = new Counter[names.length];
    for (int i = 0; i < names.length; i++) {
      c[i] = Counter.builder("sluice.decisions").tag("rule", rule).tag("outcome", names[i])
          .description("Decisions per rule by outcome").register(registry);
    }
    return c;
  }
}
