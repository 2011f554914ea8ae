package dev.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Leased mode's metrics (docs/scaling.md), fed by {@link SluiceMetrics}'s lease events. In
 * Prometheus:
 *
 * <ul>
 *   <li>{@code sluice_lease_takes_total{rule}} and {@code sluice_lease_units_taken_total{rule}} —
 *       takes of units from the store's exact state (renewals), and the units they granted;
 *   <li>{@code sluice_lease_units_given_back_total{rule}} — units given back unused;
 *   <li>{@code sluice_lease_keys} and {@code sluice_lease_units_held} — keys this instance holds
 *       leases of, and the units it holds unused (its part of the over-admission bound), as of its
 *       last report interval;
 *   <li>{@code sluice_lease_leader} (1 while this instance leads, else 0),
 *       {@code sluice_lease_leader_changes_total} (terms won and lost here) and
 *       {@code sluice_lease_rebalances_total} (sizes published while leading).
 * </ul>
 */
final class LeaseMetrics {
  private final MeterRegistry registry;
  private final ConcurrentHashMap<String, Counter> takes = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> taken = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> givenBack = new ConcurrentHashMap<>();
  private final AtomicLong keys = new AtomicLong();
  private final AtomicLong held = new AtomicLong();
  private final AtomicLong leads = new AtomicLong();
  private final Counter leaderChanges;
  private final Counter rebalances;

  LeaseMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("sluice.lease.keys", keys, AtomicLong::get)
        .description("Keys of leased rules this instance holds units of").register(registry);
    Gauge.builder("sluice.lease.units.held", held, AtomicLong::get)
        .description("Units this instance holds unused, taken from the store (its part of the over-admission bound)")
        .register(registry);
    Gauge.builder("sluice.lease.leader", leads, AtomicLong::get)
        .description("1 while this instance is the leader that sizes every instance's leases").register(registry);
    this.leaderChanges = Counter.builder("sluice.lease.leader.changes")
        .description("Times this instance became or stopped being the leases' leader").register(registry);
    this.rebalances = Counter.builder("sluice.lease.rebalances")
        .description("Sizes published to the instances while this instance led").register(registry);
  }

  void take(String rule, long units) {
    takes.computeIfAbsent(rule, r -> Counter.builder("sluice.lease.takes").tag("rule", r)
        .description("Takes of units from the store's exact state").register(registry)).increment();
    taken.computeIfAbsent(rule, r -> Counter.builder("sluice.lease.units.taken").tag("rule", r)
        .description("Units taken from the store's exact state").register(registry)).increment(units);
  }

  void giveBack(String rule, long units) {
    givenBack.computeIfAbsent(rule, r -> Counter.builder("sluice.lease.units.given.back").tag("rule", r)
        .description("Units given back to the store unused").register(registry)).increment(units);
  }

  void held(int keys, long units) {
    this.keys.set(keys);
    this.held.set(units);
  }

  void leadership(boolean leads) {
    this.leads.set(leads ? 1 : 0);
    leaderChanges.increment();
  }

  void rebalance() {
    rebalances.increment();
  }
}
