package dev.sluice.server.http;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.internal.lease.UsageReport;
import dev.sluice.policy.Policies;
import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * The dashboard's leases: for the leased rules in force, what this instance holds of their keys as
 * its last usage report on the lease board says (what {@code GET /v1/leases} reads), and the
 * leader. Bounded in rules and keys whatever the board holds; the answer's writer bounds bytes.
 */
final class DashboardLeases {
  /** Leased rules shown, by name. */
  static final int MAX_RULES = 10;
  /** Keys shown per rule, most units held first. */
  static final int KEYS_PER_RULE = 20;
  /**
   * Bytes of reports read: less than {@code /v1/leases} reads, since the page asks every second; a
   * board holding more may leave this instance's report out ({@code partial}).
   */
  static final long READ_BYTES = 1024 * 1024;

  /**
   * One leased rule.
   *
   * @param keys this instance's entries of the rule, most units held first, at most {@link #KEYS_PER_RULE}
   * @param keysReported how many keys of the rule this instance reported
   * @param unitsHeld the units it holds of them all
   */
  record LeasedRule(Rule rule, List<UsageReport.Entry> keys, int keysReported, long unitsHeld,
      ToLongFunction<String> budgets) {
    LeasedRule withBudgets(ToLongFunction<String> b) {
      return new LeasedRule(rule, keys, keysReported, unitsHeld, b);
    }
  }

  /**
   * @param leasedRules leased rules in force, those beyond {@code rules} included
   * @param self this instance's id on the board, null if unknown
   * @param reported whether this instance's report was read
   * @param intervalMs the interval of that report
   * @param instances reports read (instances leasing)
   * @param partial whether the board may hold more reports than those read
   */
  record View(List<LeasedRule> rules, int leasedRules, LeaseBoard.Leader leader, String self, boolean reported,
      long intervalMs, int instances, boolean partial) {}

  private DashboardLeases() {}

  /** The leased rules of {@code all}, by name. */
  static List<Rule> leased(java.util.Collection<Rule> all) {
    return all.stream().filter(r -> r.lease() != null).sorted(Comparator.comparing(Rule::name)).toList();
  }

  /**
   * @param policies the limiter's, null if its store keeps none: each key's budget follows its
   *     live limit, as its lease does ({@link LeaseBudgets})
   */
  static CompletableFuture<View> read(LeaseBoard board, List<Rule> leased, String self, Policies policies,
      RuleSet inForce) {
    CompletableFuture<Map<String, byte[]>> reports = board.reports(READ_BYTES).toCompletableFuture();
    return reports.thenCombine(board.leader(), (r, leader) -> of(leased, r, leader, self)).thenCompose(v -> {
      List<CompletableFuture<LeasedRule>> rules = new ArrayList<>();
      for (LeasedRule r : v.rules()) {
        List<String> keys = r.keys().stream().map(UsageReport.Entry::key).toList();
        rules.add(LeaseBudgets.of(policies, inForce, r.rule(), keys).thenApply(r::withBudgets));
      }
      return CompletableFuture.allOf(rules.toArray(CompletableFuture[]::new)).thenApply(x -> new View(
          rules.stream().map(CompletableFuture::join).toList(), v.leasedRules(), v.leader(), v.self(), v.reported(),
          v.intervalMs(), v.instances(), v.partial()));
    });
  }

  static View of(List<Rule> leased, Map<String, byte[]> reports, LeaseBoard.Leader leader, String self) {
    Map<String, List<UsageReport.Entry>> byRule = new LinkedHashMap<>();
    List<Rule> shown = leased.subList(0, Math.min(MAX_RULES, leased.size()));
    for (Rule r : shown) {
      byRule.put(r.name(), new ArrayList<>());
    }
    UsageReport own = null;
    byte[] data = self == null ? null : reports.get(self);
    if (data != null) {
      try {
        // A key is never longer than the report holding it.
        own = UsageReport.decode(data, LeaseBoard.MAX_ENTRY_BYTES);
      } catch (IllegalArgumentException e) {
        own = null; // another version's: shown as not read
      }
    }
    if (own != null) {
      for (UsageReport.Entry e : own.entries()) {
        List<UsageReport.Entry> l = byRule.get(e.rule());
        if (l != null) {
          l.add(e);
        }
      }
    }
    List<LeasedRule> rules = new ArrayList<>(shown.size());
    for (Rule r : shown) {
      List<UsageReport.Entry> l = byRule.get(r.name());
      long held = 0;
      for (UsageReport.Entry e : l) {
        held += e.held();
      }
      l.sort(Comparator.comparingLong((UsageReport.Entry e) -> -e.held()).thenComparing(UsageReport.Entry::key));
      rules.add(new LeasedRule(r, List.copyOf(l.subList(0, Math.min(KEYS_PER_RULE, l.size()))), l.size(), held,
          key -> r.lease().budget(r.windowsFor(key))));
    }
    long bytes = 0;
    for (byte[] b : reports.values()) {
      bytes += b.length;
    }
    boolean partial = bytes + LeaseBoard.MAX_ENTRY_BYTES > READ_BYTES;
    return new View(rules, leased.size(), leader, self, own != null, own == null ? 0 : own.elapsedMillis(),
        reports.size(), partial);
  }
}
