package dev.sluice.server.http;

import dev.sluice.Rule;
import dev.sluice.policy.ListKind;
import dev.sluice.server.StoreHealth;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.server.config.SourceFile;
import dev.sluice.server.metrics.DecisionRates;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one answer of {@code /v1/dashboard} shows of the rules: the busiest rules in force whose
 * names contain the filter (traffic over the ring, then since the start, then by name), at most
 * {@code count} of them, and the rest of those matching summed into one row, so that an answer
 * stays small with any number of rules.
 */
record DashboardView(List<Row> rows, Row others, int othersCount, long[] allTotals, int rulesInForce, int matching,
    String filter, ConfigReloader.Status reload, List<SourceFile> sources, StoreHealth.Status health,
    StoreLatency latency, Map<String, long[]> deniedByRule) {

  /**
   * A rule's row.
   *
   * @param rule the rule, or null for the sum of the others
   * @param source the file that defines it, or null
   * @param totals counts since the start ({@link DecisionRates}'s fields)
   * @param series counts per bucket, oldest first
   * @param allow the entries of its configured allow list
   * @param deny the entries of its configured deny list
   */
  record Row(Rule rule, String source, long[] totals, long[][] series, List<String> allow, List<String> deny) {}

  static DashboardView of(DecisionRates.Snapshot s, ServiceConfig cfg, ConfigReloader.Status reload, String filter,
      int count, StoreHealth.Status health, StoreLatency latency) {
    long[] all = new long[5];
    for (long[] v : s.totals().values()) {
      for (int i = 0; i < all.length; i++) {
        all[i] += v[i];
      }
    }
    Map<String, Long> recent = new HashMap<>();
    for (Map.Entry<String, long[][]> e : s.series().entrySet()) {
      long sum = 0;
      for (long[] b : e.getValue()) {
        sum += b[DecisionRates.ALLOWED] + b[DecisionRates.DENIED] + b[DecisionRates.SHADOW_DENIED]
            + b[DecisionRates.DEGRADED];
      }
      recent.put(e.getKey(), sum);
    }
    List<Rule> matching = new ArrayList<>();
    for (Rule r : cfg.rules().rules()) {
      if (filter.isEmpty() || r.name().contains(filter)) {
        matching.add(r);
      }
    }
    matching.sort(Comparator.<Rule>comparingLong(r -> -recent.getOrDefault(r.name(), 0L))
        .thenComparingLong(r -> -traffic(s.totals().get(r.name())))
        .thenComparing(Rule::name));
    Map<String, SourceFile> sourceOf = sourcesOf(cfg);
    Map<String, List<String>> allow = cfg.rules().lists(ListKind.ALLOW);
    Map<String, List<String>> deny = cfg.rules().lists(ListKind.DENY);
    List<Row> rows = new ArrayList<>();
    long[] otherTotals = new long[5];
    long[][] otherSeries = new long[DecisionRates.BUCKETS][5];
    for (int i = 0; i < matching.size(); i++) {
      Rule r = matching.get(i);
      long[] totals = s.totals().getOrDefault(r.name(), new long[5]);
      long[][] series = s.series().get(r.name());
      if (i < count) {
        SourceFile f = sourceOf.get(r.name());
        rows.add(new Row(r, f == null ? null : f.file(), totals,
            series == null ? new long[DecisionRates.BUCKETS][5] : series,
            allow.getOrDefault(r.name(), List.of()), deny.getOrDefault(r.name(), List.of())));
      } else {
        add(otherTotals, totals);
        if (series != null) {
          for (int b = 0; b < series.length; b++) {
            add(otherSeries[b], series[b]);
          }
        }
      }
    }
    // Rules beyond a bucket's bound were summed there: they belong to the others' row.
    long[][] beyond = s.series().get(DecisionRates.OTHERS);
    if (beyond != null) {
      for (int b = 0; b < beyond.length; b++) {
        add(otherSeries[b], beyond[b]);
      }
    }
    Map<String, long[]> denied = new HashMap<>();
    for (Rule r : cfg.rules().rules()) {
      long[] t = s.totals().get(r.name());
      if (t != null && t[DecisionRates.DENIED] > 0) {
        long[][] series = s.series().get(r.name());
        long inRing = 0;
        if (series != null) {
          for (long[] b : series) {
            inRing += b[DecisionRates.DENIED];
          }
        }
        denied.put(r.name(), new long[] {inRing, t[DecisionRates.DENIED]});
      }
    }
    return new DashboardView(rows, new Row(null, null, otherTotals, otherSeries, List.of(), List.of()),
        Math.max(0, matching.size() - count), all, cfg.rules().rules().size(), matching.size(), filter, reload,
        cfg.sources(), health, latency, denied);
  }

  /** The file of each rule, kept for the configuration in force: it changes only with a reload. */
  private static volatile Map.Entry<ServiceConfig, Map<String, SourceFile>> sourcesInForce;

  private static Map<String, SourceFile> sourcesOf(ServiceConfig cfg) {
    Map.Entry<ServiceConfig, Map<String, SourceFile>> s = sourcesInForce;
    if (s != null && s.getKey() == cfg) {
      return s.getValue();
    }
    Map<String, SourceFile> sourceOf = new HashMap<>();
    for (SourceFile f : cfg.sources()) {
      for (String name : f.rules()) {
        sourceOf.putIfAbsent(name, f);
      }
    }
    sourcesInForce = Map.entry(cfg, sourceOf);
    return sourceOf;
  }

  private static long traffic(long[] v) {
    return v == null ? 0 : v[DecisionRates.ALLOWED] + v[DecisionRates.DENIED] + v[DecisionRates.SHADOW_DENIED]
        + v[DecisionRates.DEGRADED];
  }

  private static void add(long[] into, long[] v) {
    for (int i = 0; i < into.length; i++) {
      into[i] += v[i];
    }
  }

  /** The rules with the most denials, over the ring first, then since the start; at most {@code n}. */
  List<String> mostDenying(int n) {
    return deniedByRule.entrySet().stream()
        .sorted(Comparator.<Map.Entry<String, long[]>>comparingLong(e -> -e.getValue()[0])
            .thenComparingLong(e -> -e.getValue()[1]).thenComparing(Map.Entry::getKey))
        .limit(n).map(Map.Entry::getKey).toList();
  }
}
