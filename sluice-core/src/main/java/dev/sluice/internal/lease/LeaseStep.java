package dev.sluice.internal.lease;

import dev.sluice.DecisionListener;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.internal.policy.LocalItem;
import dev.sluice.internal.policy.LocalStep;
import dev.sluice.spi.Grants;
import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Leased mode's local step (docs/scaling.md): an item of a leased rule is admitted from the units
 * this instance holds for its key, without the store, while it holds enough; otherwise it goes to
 * the store as an exact decision and a take of more units starts. A leased item is never denied
 * here: denials are the store's.
 *
 * <p>How many units it may hold of a key, its size, comes from the leader ({@link LeaseLeader},
 * elected through the store's lease board; every instance may become it): each report interval
 * the instance reports its use per key and reads back the sizes published for it. While a leader
 * leads, a key it published no size for gets none: its requests are decided exactly until the
 * leader sizes it; so are all keys until the instance's first report is answered. Without a leader each instance holds at most ⌊B ÷ (n + 1)⌋ units of a key, B
 * being the rule's budget for it and n the instances with a usage report on the board, and no
 * more than its last published size while that may still be in force elsewhere. So the units all
 * instances hold unused stay within B, the bound on over-admission. A grant's units still unused
 * a lease length after the last take go back to the store, all of them when the size shrinks
 * below what is held, and all when the limiter closes.
 *
 * <p>A request of several items stays all or nothing: when it ends denied (another item denied
 * it, here or at the store), the units its leased items took go back to the balance ({@link
 * #undo}). A key with a live limit is leased under its windows, with their budget (the leader
 * sizes it by the same windows). Decided exactly instead: requests at an explicit time, items the
 * request gave windows of their own, peeks (cost 0) and shadow rules.
 */
public final class LeaseStep implements LocalStep, AutoCloseable {
  /** Keys held at most; beyond them new keys are decided exactly. */
  public static final int MAX_KEYS = 10_000;
  /** Keys in one usage report at most, the hottest: the rest wait for a later interval. */
  static final int MAX_REPORTED_KEYS = 256;
  private static final System.Logger LOG = System.getLogger(LeaseStep.class.getName());
  private static final long TICK_MILLIS = 10;

  private final Grants grants;
  private final Ticker ticker;
  private final int maxKeys;
  private final Map<String, Holding> book = new ConcurrentHashMap<>();
  /** Guarded by {@code book}'s monitor. */
  private ScheduledExecutorService keeper;
  private boolean closed;
  /** Instances with a report on the board, this one included, as last answered; 1 until then. */
  private volatile int instances = 1;
  private volatile long lastReportMicros = Long.MIN_VALUE;
  /** The sizes last published for this instance, by rule and key; empty when none are in force. */
  private volatile Map<String, Long> published = Map.of();
  /** Whether a report was answered yet: until then every key is decided exactly. */
  private volatile boolean answered;
  /** Whether the last report's answer named a leader whose term runs. */
  private volatile boolean leaderInForce;
  /** The limiter's clock when sizes published for this instance were last read. */
  private volatile long lastPublishSeenMicros = Long.MIN_VALUE;
  private final LeaseEvents events;
  private final LeaseHolder holder;

  /**
   * @param id this instance's id on the board ({@link LeaseHolder#newId})
   * @param rules the rule in force by name (null if none): the leader sizes the keys of the rules
   *     it knows
   */
  public LeaseStep(Grants grants, LeaseBoard board, String id, Ticker ticker, int maxKeys,
      Function<String, Rule> rules, BiFunction<Rule, String, List<Window>> windowsOf, int maxKeyBytes,
      DecisionListener[] listeners) {
    this.events = new LeaseEvents(listeners);
    this.grants = grants;
    this.ticker = ticker;
    this.maxKeys = maxKeys;
    this.holder = new LeaseHolder(board, id, rules, windowsOf, maxKeyBytes, events);
  }

  /** This instance's id on the lease board. */
  public String id() {
    return holder.id();
  }

  /**
   * The keeper's thread, started with the first key held: a limiter without leased keys runs
   * none. Null until then, and after {@link #close}.
   */
  private ScheduledExecutorService keeper() {
    synchronized (book) {
      if (keeper == null && !closed) {
        keeper = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "sluice-leases");
          t.setDaemon(true);
          return t;
        });
        keeper.scheduleWithFixedDelay(this::tickQuietly, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
      }
      return keeper;
    }
  }

  @Override
  public boolean acts(Rule rule) {
    return rule.lease() != null;
  }

  /** The time the store is asked is the time of a local admission: the step needs it. */
  @Override
  public boolean timed() {
    return true;
  }

  @Override
  public ItemDecision before(LocalItem item) {
    Rule rule = item.rule();
    if (rule.lease() == null || rule.shadow() || item.cost() == 0 || item.startMicros() == LocalItem.NO_START
        || item.ownWindows()) {
      return null;
    }
    long now = item.startMicros();
    Holding h = holding(rule, item.key(), item.windows(), now);
    if (h == null) {
      return null;
    }
    h.lastSeenMicros = now;
    long size = h.size;
    if (size <= 0) {
      h.sent.addAndGet(item.cost()); // demand the leader should see
      return null;
    }
    if (!h.tryConsume(item.cost(), now)) {
      renew(h);
      if (!h.tryConsume(item.cost(), now)) {
        h.sent.addAndGet(item.cost());
        return null; // dry: the store decides this one exactly
      }
    }
    renew(h);
    return h.admitted(item.cost());
  }

  /**
   * The most units this instance may hold of {@code h}'s key now: the size published for it; none
   * while a leader leads without sizing it; otherwise the even share, at most the last size while
   * a size read less than a lease length ago may be in force elsewhere.
   */
  private long sizeFor(Holding h, long nowMicros) {
    if (!answered) {
      return 0; // until the board says how many instances share the budget, and who leads
    }
    Long p = published.get(h.id);
    if (p != null) {
      return Math.min(p, h.budget);
    }
    if (leaderInForce) {
      return 0;
    }
    long seen = lastPublishSeenMicros;
    boolean passed = seen == Long.MIN_VALUE || nowMicros - seen >= h.leaseLengthMicros;
    return ProportionalShare.evenShare(h.size, h.budget, instances, passed);
  }

  private Holding holding(Rule rule, String key, List<Window> windows, long nowMicros) {
    String id = rule.name() + '\u0000' + key;
    Holding h = book.get(id);
    if (h != null && h.rule.equals(rule) && h.windows.equals(windows)) {
      return h;
    }
    if (h != null) {
      retire(id, h); // the rule or the key's windows changed: its units go back under the old ones
    }
    if (book.size() >= maxKeys) {
      return null;
    }
    if (keeper() == null) {
      return null; // closed
    }
    Holding fresh = new Holding(id, rule, key, windows);
    fresh.lastSeenMicros = nowMicros;
    fresh.size = sizeFor(fresh, nowMicros);
    Holding prior = book.putIfAbsent(id, fresh);
    return prior != null ? prior : fresh;
  }

  /** A request this step admitted an item of ended denied: the units go back to the balance. */
  @Override
  public void undo(ItemDecision answered) {
    Holding h = book.get(answered.rule() + '\u0000' + answered.key());
    if (h != null) {
      h.undo(answered.cost());
    }
  }

  /** Starts a take up to the size if the balance is at half of it or less and none is in flight. */
  private void renew(Holding h) {
    if (h.taking || h.balance() > h.size / 2) {
      return; // the common case, without the holding's lock
    }
    long want = h.startTake();
    if (want <= 0) {
      return;
    }
    CompletableFuture<Grants.Grant> take;
    try {
      take = grants.take(h.item(1), want).toCompletableFuture();
    } catch (RuntimeException e) {
      h.landed(null, ticker.nowMicros());
      return;
    }
    take.whenComplete((g, err) -> {
      if (err == null) {
        events.emit(l -> l.onLeaseTake(h.rule.name(), g.units()));
      }
      long back = h.landed(err == null ? g : null, ticker.nowMicros());
      if (back > 0) {
        giveBack(h, List.of(new Holding.Return(g, back)));
      }
    });
  }

  private void retire(String id, Holding h) {
    if (book.remove(id, h)) {
      synchronized (h) {
        h.retired = true;
      }
      giveBack(h, h.drain());
    }
  }

  private CompletableFuture<Void> giveBack(Holding h, List<Holding.Return> returns) {
    List<CompletableFuture<Void>> sent = new ArrayList<>();
    for (Holding.Return r : returns) {
      events.emit(l -> l.onLeaseGiveBack(h.rule.name(), r.units()));
      try {
        sent.add(grants.giveBack(h.item(1), r.grant(), r.units()).toCompletableFuture()
            .exceptionally(e -> null)); // units not given back stay counted until the window forgets them
      } catch (RuntimeException e) {
        // likewise
      }
    }
    return CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0]));
  }

  private void tickQuietly() {
    try {
      tick();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "a lease tick failed: " + e);
    }
  }

  /**
   * One round of the keeper: a usage report when one is due (which answers the instances
   * counted), and the units of keys whose last take is a lease length old go back.
   */
  void tick() {
    long now = ticker.nowMicros();
    long interval = Long.MAX_VALUE;
    long term = 0;
    for (Map.Entry<String, Holding> e : book.entrySet()) {
      Holding h = e.getValue();
      long length = h.leaseLengthMicros;
      interval = Math.min(interval, h.rule.lease().reportInterval().toNanos() / 1000);
      term = Math.max(term, length / 1000);
      if (h.taking) {
        continue;
      }
      if (now - h.lastSeenMicros >= length) {
        retire(e.getKey(), h); // no request for a lease length: forgotten, its units given back
      } else if (h.lastTakeMicros != 0 && now - h.lastTakeMicros >= length) {
        giveBack(h, h.drain());
      }
    }
    if (interval != Long.MAX_VALUE && (lastReportMicros == Long.MIN_VALUE || now - lastReportMicros >= interval)) {
      report(now, Math.max(1, term));
    }
  }

  /**
   * Reports this instance's use and adopts what the answer says: the sizes published for it, the
   * leader in force, the instances counted. Then, when no leader's term runs or this instance
   * leads, a leader cycle (campaign, rebalance, publish).
   */
  private void report(long now, long termMillis) {
    long[] round = new long[2]; // keys and units held, for the listeners once the round is over
    // The listeners hear last, so that one seeing it knows the round is over (on a store that
    // answers at once, its leader cycle too).
    holder.report(termMillis, () -> usage(now, round), (answer, published) -> adopt(answer, published,
        ticker.nowMicros()), () -> events.emit(l -> l.onLeasesHeld((int) round[0], round[1])));
  }

  /**
   * The usage report, per key: units admitted locally and units sent to the store (demand a size
   * did not cover), both since the last report, the size in use and the units held; the hottest
   * keys first. Puts the keys and the units held in {@code round}.
   */
  private byte[] usage(long now, long[] round) {
    long elapsed = lastReportMicros == Long.MIN_VALUE ? 0 : (now - lastReportMicros) / 1000;
    lastReportMicros = now;
    List<UsageReport.Entry> entries = new ArrayList<>();
    long held = 0;
    for (Holding h : book.values()) {
      held += h.balance();
      entries.add(new UsageReport.Entry(h.rule.name(), h.key, h.admitted.getAndSet(0), h.sent.getAndSet(0), h.size,
          h.balance()));
    }
    round[0] = entries.size();
    round[1] = held;
    entries.sort(Comparator.comparingLong((UsageReport.Entry e) -> -(e.admitted() + e.sent())));
    if (entries.size() > MAX_REPORTED_KEYS) {
      entries = entries.subList(0, MAX_REPORTED_KEYS);
    }
    return new UsageReport(elapsed, 0, entries).encode(LeaseBoard.MAX_ENTRY_BYTES).bytes();
  }

  /** Takes the sizes and the leader a report's answer gives, resizing every key held. */
  private void adopt(LeaseBoard.ReportAnswer answer, SizeTable published, long now) {
    LeaseBoard.Leader l = answer.leader();
    leaderInForce = l.instance() != null && l.untilMillis() > l.nowMillis();
    instances = Math.max(1, answer.instances());
    answered = true;
    Map<String, Long> sizes = Map.of();
    if (published != null) {
      Map<String, Long> read = new HashMap<>();
      for (SizeTable.Entry e : published.entries()) {
        read.put(e.rule() + '\u0000' + e.key(), e.size());
      }
      sizes = read;
      lastPublishSeenMicros = now;
    }
    this.published = sizes;
    for (Holding h : book.values()) {
      List<Holding.Return> back = h.resize(sizeFor(h, now));
      if (!back.isEmpty()) {
        giveBack(h, back);
      }
    }
  }

  /** Whether this instance led at its last leader cycle. */
  public boolean leads() {
    return holder.leads();
  }

  /** Gives every unit held back, waiting at most a second for the store. */
  @Override
  public void close() {
    synchronized (book) {
      closed = true;
      if (keeper != null) {
        keeper.shutdownNow();
      }
    }
    List<CompletableFuture<Void>> all = new ArrayList<>();
    all.add(holder.resign());
    for (Map.Entry<String, Holding> e : book.entrySet()) {
      Holding h = e.getValue();
      if (book.remove(e.getKey(), h)) {
        synchronized (h) {
          h.retired = true;
        }
        all.add(giveBack(h, h.drain()));
      }
    }
    try {
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(1, TimeUnit.SECONDS);
    } catch (Exception e) {
      // Units not given back stay counted until the store's windows forget them.
    }
  }
}
