package dev.sluice.internal.lease;

import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.internal.lease.ProportionalShare.KeyView;
import dev.sluice.internal.lease.ProportionalShare.Usage;
import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The leader's side of leased mode (docs/scaling.md, "The leader"), one per limiter: each cycle it
 * campaigns (which renews its term when it leads), and while it leads it reads every instance's
 * usage report from the lease board, sets each instance's size per key by {@link
 * ProportionalShare}, and publishes them fenced by its token. A publish refused means another
 * instance leads: this one steps down and forgets what it published.
 *
 * <p>A new term starts with a learning period of {@link #LEARNING_CYCLES} cycles, in which it
 * republishes the sizes instances report in use and grows no one. Every instance reports the size
 * it uses each interval, so the sizes a new leader cannot see are only those an earlier leader
 * published and an instance adopted at its last report (it adopts when a report is answered): its
 * next report shows them. Counted in cycles, not time, as the instances' intervals are.
 *
 * <p>Not thread-safe: the keeper's thread runs one cycle at a time (see {@link LeaseStep}).
 */
public final class LeaseLeader {
  /** The most report bytes read per cycle; instances past it keep their sizes until they expire. */
  static final long MAX_REPORT_BYTES = 4L << 20;
  /** The weight of the newest interval in an instance's demand: 87.5 % of a change in three. */
  static final double ALPHA = 0.5;
  /** Cycles a new term republishes sizes in use and grows no one: one report each, and two spare. */
  static final int LEARNING_CYCLES = 3;

  private final LeaseBoard board;
  private final String id;
  /** The rule in force by name, null if there is none. */
  private final Function<String, Rule> rules;
  /** The windows a key of a rule is decided under (its live limit's, where it has one). */
  private final BiFunction<Rule, String, List<Window>> windowsOf;
  private final int maxKeyBytes;

  /** The token of the term this instance leads in, 0 when it does not lead. */
  private long token;
  /** Cycles of its learning period still to come. */
  private int learningLeft;
  /** Sizes published in this term, by instance and key, and when they expire (store clock). */
  private Map<String, Map<RuleKey, Long>> published = Map.of();
  private long publishedUntilMillis;
  /** Each instance's averaged demand per key, units per second; rebuilt from each cycle's reports. */
  private Map<String, Map<RuleKey, Double>> demand = Map.of();
  /** Terms won and cycles published, for metrics and tests. */
  private long terms;
  private long rebalances;

  record RuleKey(String rule, String key) {}

  private final LeaseEvents events;

  /**
   * A leader that tells no listener: for a lease holder other than a limiter (the service's quota
   * streams).
   *
   * @param rules the rule in force by name, null if none
   */
  public LeaseLeader(LeaseBoard board, String id, Function<String, Rule> rules, int maxKeyBytes) {
    this(board, id, rules, Rule::windowsFor, maxKeyBytes, new LeaseEvents(new dev.sluice.DecisionListener[0]));
  }

  /** @param windowsOf the windows a key of a rule is decided under: its budget is theirs */
  LeaseLeader(LeaseBoard board, String id, Function<String, Rule> rules, BiFunction<Rule, String, List<Window>> windowsOf,
      int maxKeyBytes, LeaseEvents events) {
    this.events = events;
    this.board = board;
    this.id = id;
    this.rules = rules;
    this.windowsOf = windowsOf;
    this.maxKeyBytes = maxKeyBytes;
  }

  public boolean leads() {
    return token != 0;
  }

  long terms() {
    return terms;
  }

  long rebalances() {
    return rebalances;
  }

  /**
   * One cycle: campaign for (or renew) a term of {@code termMillis}; if this instance leads,
   * rebalance and publish sizes kept for {@code termMillis}. Completes when done; never fails
   * (a failed call leaves the next cycle to try again).
   */
  public CompletableFuture<Void> cycle(long termMillis) {
    return board.campaign(id, termMillis).toCompletableFuture().thenCompose(leader -> {
      if (!id.equals(leader.instance())) {
        stepDown();
        return CompletableFuture.<Void>completedFuture(null);
      }
      if (leader.token() != token) {
        // A new term: nothing known of the sizes in force.
        boolean was = token != 0;
        token = leader.token();
        terms++;
        if (!was) {
          events.emit(l -> l.onLeadership(true));
        }
        learningLeft = LEARNING_CYCLES;
        published = Map.of();
        demand = Map.of();
      }
      long now = leader.nowMillis();
      return board.reports(MAX_REPORT_BYTES).toCompletableFuture()
          .thenCompose(reports -> publish(reports, now, termMillis));
    }).exceptionally(e -> {
      stepDown(); // the store did not answer: this instance cannot know it still leads
      return null;
    });
  }

  private CompletableFuture<Void> publish(Map<String, byte[]> reports, long now, long termMillis) {
    boolean learning = learningLeft > 0;
    if (learning) {
      learningLeft--;
    }
    Map<RuleKey, Map<String, Usage>> usage = new LinkedHashMap<>();
    Map<RuleKey, Long> budgets = new HashMap<>();
    Map<String, Map<RuleKey, Double>> nextDemand = new HashMap<>();
    reports.forEach((instance, bytes) -> {
      UsageReport r;
      try {
        r = UsageReport.decode(bytes, maxKeyBytes);
      } catch (IllegalArgumentException e) {
        return; // another version or a damaged entry: that instance keeps its sizes until they expire
      }
      Map<RuleKey, Double> before = demand.getOrDefault(instance, Map.of());
      Map<RuleKey, Double> after = new HashMap<>();
      for (UsageReport.Entry e : r.entries()) {
        Rule rule = rules.apply(e.rule());
        if (rule == null || rule.lease() == null) {
          continue; // a rule this leader does not lease: it sizes only what it knows
        }
        RuleKey k = new RuleKey(e.rule(), e.key());
        budgets.computeIfAbsent(k, x -> rule.lease().budget(windowsOf.apply(rule, e.key())));
        Double prior = before.get(k);
        double d;
        if (r.elapsedMillis() <= 0) {
          d = prior == null ? 0 : prior; // a first report measures no interval
        } else {
          double rate = (e.admitted() + (double) e.sent()) * 1000.0 / r.elapsedMillis();
          d = prior == null ? rate : ALPHA * rate + (1 - ALPHA) * prior;
        }
        after.put(k, d);
        usage.computeIfAbsent(k, x -> new HashMap<>()).put(instance, new Usage(d, Math.min(e.sizeInUse(),
            budgets.get(k))));
      }
      nextDemand.put(instance, after);
    });
    demand = nextDemand;
    Map<RuleKey, Map<String, Long>> publishedByKey = new HashMap<>();
    if (now < publishedUntilMillis) {
      published.forEach((instance, sizes) -> sizes.forEach((k, size) ->
          publishedByKey.computeIfAbsent(k, x -> new HashMap<>()).put(instance, size)));
    }
    Map<RuleKey, KeyView> views = new LinkedHashMap<>();
    usage.forEach((k, reported) -> views.put(k, new KeyView(budgets.get(k), reported,
        publishedByKey.getOrDefault(k, Map.of()))));
    Map<RuleKey, Map<String, Long>> sizes = ProportionalShare.rebalance(views, learning);
    Map<String, Map<RuleKey, Long>> byInstance = new HashMap<>();
    sizes.forEach((k, perInstance) -> perInstance.forEach((instance, size) ->
        byInstance.computeIfAbsent(instance, x -> new LinkedHashMap<>()).put(k, size)));
    // Each key's demand over every holder, summed once: the denominator of each holder's share.
    Map<RuleKey, Double> totals = new HashMap<>();
    usage.forEach((k, reported) -> totals.put(k, reported.values().stream().mapToDouble(Usage::demand).sum()));
    Map<String, byte[]> tables = new HashMap<>();
    byInstance.forEach((instance, perKey) -> {
      List<SizeTable.Entry> entries = new ArrayList<>();
      perKey.forEach((k, size) -> {
        long share = share(usage.get(k), totals.getOrDefault(k, 0.0), instance);
        if (size > 0 || share > 0) {
          entries.add(new SizeTable.Entry(k.rule(), k.key(), size, share));
        }
      });
      try {
        tables.put(instance, new SizeTable(0, entries).encode());
      } catch (IllegalArgumentException e) {
        // Cannot happen for keys from one bounded report; if it did, that instance gets no sizes.
      }
    });
    long fenced = token;
    return board.publish(id, fenced, tables, termMillis).toCompletableFuture().thenAccept(ok -> {
      if (!ok) {
        stepDown();
        return;
      }
      published = byInstance;
      publishedUntilMillis = now + termMillis;
      rebalances++;
      int keys = sizes.size();
      events.emit(l -> l.onLeaseRebalance(keys));
    });
  }

  /**
   * {@code instance}'s share of the key's demand, in millionths: what the service's quota streams
   * take their part of the key's rate by (the sizes are units held, which they do not use).
   */
  private static long share(Map<String, Usage> reported, double total, String instance) {
    if (reported == null || !reported.containsKey(instance)) {
      return 0;
    }
    if (!(total > 0)) {
      return 0;
    }
    return Math.min(SizeTable.SHARE_SCALE, Math.round(SizeTable.SHARE_SCALE * reported.get(instance).demand() / total));
  }

  private void stepDown() {
    if (token != 0) {
      events.emit(l -> l.onLeadership(false));
    }
    token = 0;
    published = Map.of();
    demand = Map.of();
  }

  /** Ends this instance's term at once, if it leads: another is elected at the next campaign. */
  public CompletableFuture<Void> resign() {
    long t = token;
    stepDown();
    if (t == 0) {
      return CompletableFuture.completedFuture(null);
    }
    return board.resign(id, t).toCompletableFuture().exceptionally(e -> null);
  }
}
