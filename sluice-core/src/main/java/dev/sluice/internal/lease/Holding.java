package dev.sluice.internal.lease;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.Grants.Grant;
import dev.sluice.spi.ResolvedItem;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one instance holds of one leased (rule, key): the units it may still admit locally (its
 * balance), the grants they came from, and the store's report at the last take, from which its
 * decisions are explained. Units are used oldest grant first, so the unused ones belong to the
 * newest grants: a give-back returns them newest first, each grant at most once.
 */
final class Holding {
  /** The rule's name and the key, as the book and the published sizes name them. */
  final String id;
  final Rule rule;
  final String key;
  final List<Window> windows;
  /** The units every instance together may hold unused for this key (docs/scaling.md, the bound). */
  final long budget;
  private final AtomicLong balance = new AtomicLong();
  final long leaseLengthMicros;
  /** Units admitted locally since the last usage report. */
  final AtomicLong admitted = new AtomicLong();
  /** Units of requests sent to the store since the last usage report: demand the size did not cover. */
  final AtomicLong sent = new AtomicLong();
  /**
   * The most units it may hold, as last set from the leader's sizes or the even share, counting
   * the units of a take in flight; set under this ({@link #resize}).
   */
  volatile long size;
  /** The limiter's clock at the last request for the key. */
  volatile long lastSeenMicros;
  /** Guarded by this. */
  private final List<Grant> grants = new ArrayList<>();
  /** Whether a take is in flight: one at a time per key; set under this. */
  volatile boolean taking;
  /**
   * The units of the take in flight this holding may keep when it lands: what it asked for, cut
   * when the size shrinks so that the balance and this never pass the size. Guarded by this.
   */
  private long claim;
  /** Whether the holding left the book: a grant that arrives now is given back at once. */
  volatile boolean retired;
  /** The store's report at the last take, null before the first. */
  volatile ItemDecision lastReport;
  /** The limiter's clock at the last take answered, and at the last local use. */
  volatile long lastTakeMicros;
  volatile long lastUseMicros;

  Holding(String id, Rule rule, String key, List<Window> windows) {
    this.id = id;
    this.rule = rule;
    this.leaseLengthMicros = rule.lease().leaseLength().toNanos() / 1000;
    this.key = key;
    this.windows = windows;
    this.budget = rule.lease().budget(windows);
  }

  ResolvedItem item(long cost) {
    return new ResolvedItem(rule, key, cost, windows);
  }

  long balance() {
    return balance.get();
  }

  /** Takes {@code cost} units off the balance if it holds them: a local admission. */
  boolean tryConsume(long cost, long nowMicros) {
    while (true) {
      long b = balance.get();
      if (b < cost) {
        return false;
      }
      if (balance.compareAndSet(b, b - cost)) {
        lastUseMicros = nowMicros;
        admitted.addAndGet(cost);
        return true;
      }
    }
  }

  /**
   * Puts back {@code cost} units a local admission took, its request having ended denied. Once
   * retired, or when they would take the holding past its size (it shrank meanwhile), the units are
   * not put back: they stay counted by the store until its windows forget them.
   */
  synchronized void undo(long cost) {
    if (!retired && balance.get() + claim + cost <= size) {
      balance.addAndGet(cost);
      admitted.addAndGet(-cost);
    }
  }

  /**
   * Starts a take when the balance is at half the size or less and none is in flight: the units
   * to ask for, the size less the balance, or 0 for no take.
   */
  synchronized long startTake() {
    long b = balance.get();
    long want = size - b;
    if (taking || retired || want <= 0 || b > size / 2) {
      return 0;
    }
    taking = true;
    claim = want;
    return want;
  }

  /**
   * The take in flight ended: {@code g} is its answer, null if it failed (its units, if the store
   * committed them, stay counted until its windows forget them). Keeps what the claim allows and
   * returns the units of {@code g} to give back: none when it keeps them all; all of them once
   * retired, or when a shrink left no claim; else the rest, and the units kept then have no grant
   * to go back with (a grant is given back once): unused, they stay counted until the store's
   * windows forget them.
   */
  synchronized long landed(Grant g, long nowMicros) {
    taking = false;
    long keep = g == null || retired ? 0 : Math.min(g.units(), claim);
    claim = 0;
    if (g == null || g.units() == 0) {
      return 0;
    }
    lastReport = g.report();
    lastTakeMicros = nowMicros;
    if (keep == g.units()) {
      grants.add(g);
    }
    balance.addAndGet(keep);
    return g.units() - keep;
  }

  /**
   * Sets the size. The units held and those the take in flight may bring never pass it: when the
   * balance does, all of it is returned for a give-back (simpler than a part, and a shrink is
   * rare); the take in flight keeps at most what is left of the size when it lands. A take asked
   * for under the old size could otherwise leave the instance holding more than its new size while
   * the leader hands the difference to others.
   */
  synchronized List<Return> resize(long newSize) {
    size = newSize;
    List<Return> out = balance.get() > newSize ? drain() : List.of();
    claim = Math.min(claim, Math.max(0, newSize - balance.get()));
    return out;
  }

  /**
   * Takes back every unused unit, for a give-back: per grant, newest first, the units of it to
   * return. The holding keeps no grant afterwards: each is given back at most once, and units
   * used from it since are the store's already.
   */
  synchronized List<Return> drain() {
    long left = balance.getAndSet(0);
    List<Return> out = new ArrayList<>();
    for (int i = grants.size() - 1; i >= 0 && left > 0; i--) {
      Grant g = grants.get(i);
      long n = Math.min(left, g.units());
      out.add(new Return(g, n));
      left -= n;
    }
    grants.clear();
    return out;
  }

  /** Units of one grant to give back. */
  record Return(Grant grant, long units) {}

  /**
   * An admission answered from the balance: the windows as this instance sees them — the store's
   * remaining at its last take plus the units it still holds (never above a window's limit), the
   * store's reset — and nothing about other instances' use since.
   */
  ItemDecision admitted(long cost) {
    ItemDecision r = lastReport;
    long held = balance.get();
    WindowState[] ws = new WindowState[windows.size()];
    for (int i = 0; i < ws.length; i++) {
      Window w = windows.get(i);
      WindowState s = r == null || i >= r.windows().size() ? null : r.windows().get(i);
      long remaining = Math.min(w.limit(), (s == null ? 0 : s.remaining()) + held);
      ws[i] = new WindowState(w.limit(), w.period().toMillis(), remaining, 0, s == null ? 0 : s.resetAfterMs(), false);
    }
    // Immutable already: the decision keeps the list without another copy.
    return new ItemDecision(rule.name(), key, cost, true, DenyReason.NONE, 0, List.of(ws), rule.shadow(), 0, true);
  }
}
