package dev.sluice.internal.lease;

import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.internal.policy.LocalItem;
import dev.sluice.internal.policy.LocalStep;
import dev.sluice.spi.Grants;
import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Leased mode's local step (docs/scaling.md): an item of a leased rule is admitted from the units
 * this instance holds for its key, without the store, while it holds enough; otherwise it goes to
 * the store as an exact decision and a take of more units starts. A leased item is never denied
 * here: denials are the store's.
 *
 * <p>Without a leader (the only mode so far) each instance holds at most ⌊B ÷ (n + 1)⌋ units of a
 * key, B being the rule's budget for it and n the instances with a usage report on the store's
 * lease board; so the units all instances hold unused stay within B, the bound on over-admission.
 * A grant's units still unused a lease length after the last take go back to the store, and all
 * of them when the limiter closes.
 *
 * <p>Decided exactly instead: requests at an explicit time, requests of several distinct items
 * (all or nothing across items needs the store), items with windows of their own or of a live
 * limit, peeks (cost 0) and shadow rules.
 */
public final class LeaseStep implements LocalStep, AutoCloseable {
  /** Keys held at most; beyond them new keys are decided exactly. */
  public static final int MAX_KEYS = 10_000;
  private static final System.Logger LOG = System.getLogger(LeaseStep.class.getName());
  private static final long TICK_MILLIS = 10;

  private final Grants grants;
  private final LeaseBoard board;
  private final Ticker ticker;
  private final String id;
  private final int maxKeys;
  private final Map<String, Holding> book = new ConcurrentHashMap<>();
  /** Guarded by {@code book}'s monitor. */
  private ScheduledExecutorService keeper;
  private boolean closed;
  /** Instances with a report on the board, this one included, as last answered; 1 until then. */
  private volatile int instances = 1;
  private volatile long lastReportMicros = Long.MIN_VALUE;
  private final AtomicBoolean reporting = new AtomicBoolean();

  public LeaseStep(Grants grants, LeaseBoard board, Ticker ticker, int maxKeys) {
    this.grants = grants;
    this.board = board;
    this.ticker = ticker;
    this.maxKeys = maxKeys;
    byte[] random = new byte[8];
    ThreadLocalRandom.current().nextBytes(random);
    this.id = ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(random);
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
        || item.requestRules().size() != 1 || item.shaped()) {
      return null;
    }
    long now = item.startMicros();
    Holding h = holding(rule, item.key(), item.windows());
    if (h == null) {
      return null;
    }
    long size = size(h);
    if (size <= 0) {
      return null;
    }
    if (!h.tryConsume(item.cost(), now)) {
      renew(h, size);
      if (!h.tryConsume(item.cost(), now)) {
        return null; // dry: the store decides this one exactly
      }
    }
    renew(h, size);
    return h.admitted(item.cost());
  }

  /** The most units this instance may hold of {@code h}'s key now. */
  long size(Holding h) {
    return h.budget / (instances + 1L);
  }

  private Holding holding(Rule rule, String key, List<Window> windows) {
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
    Holding fresh = new Holding(rule, key, windows);
    Holding prior = book.putIfAbsent(id, fresh);
    return prior != null ? prior : fresh;
  }

  /** Starts a take up to the size if the balance is at half of it or less and none is in flight. */
  private void renew(Holding h, long size) {
    long want = size - h.balance();
    if (want <= 0 || h.balance() > size / 2 || h.taking) {
      return;
    }
    synchronized (h) {
      if (h.taking || h.retired) {
        return;
      }
      h.taking = true;
    }
    CompletableFuture<Grants.Grant> take;
    try {
      take = grants.take(h.item(1), want).toCompletableFuture();
    } catch (RuntimeException e) {
      h.taking = false;
      return;
    }
    take.whenComplete((g, err) -> {
      h.taking = false;
      if (err == null && g.units() > 0 && !h.add(g, ticker.nowMicros())) {
        giveBack(h, List.of(new Holding.Return(g, g.units())));
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
    long ttl = 0;
    for (Map.Entry<String, Holding> e : book.entrySet()) {
      Holding h = e.getValue();
      long length = h.rule.lease().leaseLength().toNanos() / 1000;
      interval = Math.min(interval, h.rule.lease().reportInterval().toNanos() / 1000);
      ttl = Math.max(ttl, 2 * length / 1000);
      if (!h.taking && h.lastTakeMicros != 0 && now - h.lastTakeMicros >= length) {
        if (now - h.lastUseMicros >= length) {
          retire(e.getKey(), h); // idle for a lease length: forgotten
        } else {
          giveBack(h, h.drain());
        }
      }
    }
    if (interval != Long.MAX_VALUE && (lastReportMicros == Long.MIN_VALUE || now - lastReportMicros >= interval)) {
      report(now, Math.max(1, ttl));
    }
  }

  private void report(long now, long ttlMillis) {
    if (!reporting.compareAndSet(false, true)) {
      return;
    }
    long elapsed = lastReportMicros == Long.MIN_VALUE ? 0 : (now - lastReportMicros) / 1000;
    lastReportMicros = now;
    // What this instance knows of each key: its local admissions since the last report (denials
    // are the store's), its size and its units held.
    List<UsageReport.Entry> entries = new ArrayList<>();
    for (Holding h : book.values()) {
      entries.add(new UsageReport.Entry(h.rule.name(), h.key, h.admitted.getAndSet(0), 0, size(h), h.balance()));
    }
    byte[] bytes = new UsageReport(elapsed, 0, entries).encode(LeaseBoard.MAX_ENTRY_BYTES).bytes();
    try {
      board.report(id, bytes, ttlMillis).whenComplete((answer, err) -> {
        reporting.set(false);
        if (err == null) {
          instances = Math.max(1, answer.instances());
        }
      });
    } catch (RuntimeException e) {
      reporting.set(false);
    }
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
