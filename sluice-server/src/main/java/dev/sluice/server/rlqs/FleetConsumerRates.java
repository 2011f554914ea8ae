package dev.sluice.server.rlqs;

import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.internal.lease.LeaseHolder;
import dev.sluice.internal.lease.SizeTable;
import dev.sluice.internal.lease.UsageReport;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@link ConsumerRates} across the fleet, through leased mode's leader (docs/scaling.md §5, "One
 * budget with the Sluice instances"). The service's quota streams are one more lease holder on
 * the store's lease board: each report interval it reports, per (rule, key), its streams' demand
 * summed, and reads back its share of the key's demand over every holder that reported it —
 * Sluice instances leasing the key and other services' streams — as the leader publishes it.
 * Each stream gets its part of that share by its own demand.
 *
 * <p>Until a share is published for a key (the first reports, or no leader) the service takes the
 * whole rate for its streams, as without other holders. Rates decide only who gets what: every
 * assignment is covered by units taken from the store first, so a share too large never admits
 * past the bound. When no one leads it campaigns itself, so that proxies alone are shared too.
 */
final class FleetConsumerRates implements ConsumerRates {
  /** The longest key the leader reads in others' reports: a bucket's key is at most 512 bytes. */
  private static final int MAX_KEY_BYTES = 4 * Sluice.DEFAULT_MAX_KEY_BYTES;

  private final LocalConsumerRates local = new LocalConsumerRates();
  private final Supplier<ServiceConfig> config;
  private final LeaseHolder holder;
  /** This service's share of each key's demand, in millionths, as last published; empty when none. */
  private volatile Map<String, Long> shares = Map.of();
  /** Touched by the sweeper's thread only. */
  private long lastReportMillis = Long.MIN_VALUE;

  FleetConsumerRates(LeaseBoard board, Supplier<ServiceConfig> config) {
    this.config = config;
    this.holder = new LeaseHolder(board, "rlqs", this::rule, MAX_KEY_BYTES);
  }

  private Rule rule(String name) {
    return config.get().rules().get(name);
  }

  @Override
  public void join(Limit limit, long id) {
    local.join(limit, id);
  }

  @Override
  public void report(Limit limit, long id, double demand) {
    local.report(limit, id, demand);
  }

  @Override
  public void leave(Limit limit, long id) {
    local.leave(limit, id);
  }

  @Override
  public double rate(Limit limit, long id, double whole) {
    return local.rate(limit, id, whole * share(limit));
  }

  /** This service's share of {@code limit}'s rate: of the fleet's demand once published, else all. */
  double share(Limit limit) {
    Long s = shares.get(limit.rule() + '\u0000' + limit.key());
    return s == null || s == 0 ? 1.0 : (double) s / SizeTable.SHARE_SCALE;
  }

  /**
   * Called every sweep: once a report interval of the streams' rules has passed, reports their
   * demand and reads the shares back; then a leader cycle when no one leads or this one does.
   */
  void tick(long nowMillis) {
    Map<Limit, Double> demands = local.demands();
    long interval = Long.MAX_VALUE;
    long term = 0;
    long elapsed = lastReportMillis == Long.MIN_VALUE ? 0 : nowMillis - lastReportMillis;
    List<UsageReport.Entry> entries = new ArrayList<>();
    for (Map.Entry<Limit, Double> e : demands.entrySet()) {
      Rule r = rule(e.getKey().rule());
      if (r == null || r.lease() == null) {
        continue;
      }
      interval = Math.min(interval, r.lease().reportInterval().toMillis());
      term = Math.max(term, r.lease().leaseLength().toMillis());
      // The leader reads demand as units over the report's interval: the streams' rate over it.
      long units = Math.round(e.getValue() * elapsed / 1000.0);
      entries.add(new UsageReport.Entry(e.getKey().rule(), e.getKey().key(), units, 0, 0, 0));
    }
    if (entries.isEmpty() || (lastReportMillis != Long.MIN_VALUE && nowMillis - lastReportMillis < interval)) {
      return;
    }
    entries.sort((a, b) -> Long.compare(b.admitted(), a.admitted()));
    holder.report(Math.max(1, term), () -> {
      lastReportMillis = nowMillis;
      return new UsageReport(elapsed, 0, entries).encode(LeaseBoard.MAX_ENTRY_BYTES).bytes();
    }, (answer, published) -> adopt(published), () -> {});
  }

  /** The shares published for this service; sizes of another version read as none: the whole rate. */
  private void adopt(SizeTable published) {
    Map<String, Long> read = new HashMap<>();
    if (published != null) {
      for (SizeTable.Entry s : published.entries()) {
        read.put(s.rule() + '\u0000' + s.key(), s.share());
      }
    }
    shares = read;
  }

  /** Resigns if it leads, so that another is elected at once. */
  void close() {
    holder.resign();
  }
}
