package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.algorithm.AlgorithmTable;
import dev.sluice.algorithm.Eval;
import dev.sluice.algorithm.KeyState;
import dev.sluice.spi.BanCounts;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The memory store's one transaction: every state of a request locked in a global order,
 * evaluate all, make room for all, commit all or none, report. Bans, denial counting and audit
 * are hooks of it, taken only by requests with an item whose rule bans or audits: bans in force
 * are read before any state is looked up (a banned key's state is neither created nor read) and
 * again under the states' locks, where the items that count a denial toward their ban
 * ({@link BanCounts}) count it; consumed items record their audit value after the states are
 * unlocked.
 *
 * <p>Two shortcuts of the same transaction allocate less: {@link #decideOne} for a request of one
 * item without policies (no arrays), and {@link #tryAcquire}, which builds no report. Both first
 * try, on a key whose latest decision was a denial, to deny without the lock (see
 * {@link MemoryStore#tryAcquire}).
 */
final class Decisions {
  private final Ticker ticker;
  private final KeyMap keys;
  private final Sides sides;

  Decisions(Ticker ticker, KeyMap keys, Sides sides) {
    this.ticker = ticker;
    this.keys = keys;
    this.sides = sides;
  }

  List<ItemDecision> decide(Batch batch) {
    boolean explicit = batch.hasExplicitTime();
    long requested = explicit ? batch.timeMicros() : ticker.nowMicros();
    List<ResolvedItem> items = batch.items();
    List<ItemDecision> out;
    ResolvedItem only = items.size() == 1 ? items.get(0) : null;
    if (only != null && only.rule().ban() == null && only.audit() == null) {
      out = List.of(decideOne(only, requested, !explicit));
    } else {
      out = decideMany(items, requested);
    }
    keys.maybeSweep(requested);
    return out;
  }

  /**
   * The decision of a request of {@code cost} units of {@code rule} for {@code key} alone, on the
   * store's clock read at {@code requested} ({@link Request#STORE_CLOCK}: read now):
   * {@link #decide(Batch)}'s, without the batch or the item. A key denied again is first tried
   * without the lock, where a decision equal to the last this thread answered is answered again
   * ({@link KeyState#denialAloneWithoutLock}).
   */
  Decision decideAlone(Rule rule, String key, long cost, long requested) {
    List<Window> ws = rule.windowsFor(key);
    if (rule.ban() != null) {
      // The store's clock, not an explicit time: the transaction reads it again.
      ResolvedItem item = new ResolvedItem(rule, key, cost, ws);
      return Decision.of(decide(new Batch(List.of(item), Request.STORE_CLOCK)), false);
    }
    long now = requested == Request.STORE_CLOCK ? ticker.nowMicros() : requested;
    Decision d = null;
    KeyState s = keys.state(rule, key, ws, now);
    if (s != null && s.denying && s.countsBy(ws)) {
      d = s.denialAloneWithoutLock(rule, key, cost, now);
    }
    if (d == null) {
      ResolvedItem item = new ResolvedItem(rule, key, cost, ws);
      d = Decision.of(List.of(s == null ? full(item, now) : decideLocked(item, now, s)), false);
    }
    keys.maybeSweep(now);
    return d;
  }

  /**
   * What a decision on {@code s}, held under {@code s}'s lock, decides on for windows {@code ws}:
   * {@code s} itself when it counts by them, else a new state for them that carries its
   * consumption ({@link KeyState#carryFrom}), not yet stored. Only an admission stores it
   * ({@link KeyMap#publish}): a decision that consumes nothing — a peek, a denial — leaves the key as
   * it was, so that windows changed and changed back before any admission find it unchanged, and
   * the carry, made as of the key's latest time, gives the same state whenever it is made.
   */
  static KeyState view(Rule rule, KeyState s, List<Window> ws) {
    if (s.countsBy(ws)) {
      return s;
    }
    KeyState next = AlgorithmTable.of(rule.algorithm()).newState(rule, ws);
    next.carryFrom(s);
    return next;
  }

  /**
   * Ends a decision on {@code v}, a {@link #view} of {@code s} (locked): when {@code admit},
   * commits {@code cost} to it; else, when {@link KeyMap#room} reserved bytes for it
   * ({@code roomed}), gives them back. Answers the key's state after the decision, which the
   * caller stores ({@link KeyMap#publish}) only once it has read all it needs of it (its report,
   * its idle time): stored, a carried state is found by other deciders, and they lock it, not
   * {@code s}, and evaluate into its scratch space.
   */
  private KeyState settle(KeyState s, KeyState v, boolean admit, boolean roomed, long now, long cost, Eval e) {
    if (admit) {
      v.commit(now, cost, e);
      return v;
    }
    if (roomed) {
      keys.discard(s, v);
    }
    return s;
  }

  /**
   * The transaction for one item without bans or audit, with no arrays. A denial without the lock
   * is tried on the store's clock only ({@code onTicker}), as {@link #tryAcquire} tries it: it does
   * not record its time as the key's latest, which on a monotonic clock no later request can tell,
   * whereas a later request at an earlier explicit time would be decided at its own time instead
   * of the key's latest.
   */
  private ItemDecision decideOne(ResolvedItem item, long requested, boolean onTicker) {
    KeyState s = keys.state(item.rule(), item.key(), item.windows(), requested);
    if (s == null) {
      return full(item, requested);
    }
    if (onTicker && s.denying && s.countsBy(item.windows())) {
      ItemDecision d = s.denialWithoutLock(item, requested);
      if (d != null) {
        return d;
      }
    }
    return decideLocked(item, requested, s);
  }

  /** {@link #decideOne} under the lock of {@code found}, the key's state as looked up. */
  private ItemDecision decideLocked(ResolvedItem item, long requested, KeyState found) {
    KeyState s = found;
    while (true) {
      s.lock();
      try {
        if (!s.dead) {
          KeyState v = view(item.rule(), s, item.windows());
          boolean first = v.lastSeen == Long.MIN_VALUE;
          long now = v.clamp(requested);
          Eval e = v.evaluate(now, item.cost());
          boolean admit = e.fits && item.cost() > 0 && keys.room(s, v, now, item.cost(), e);
          markDenying(s, e.fits);
          KeyState held = settle(s, v, admit, false, now, item.cost(), e);
          if (first) {
            keys.firstDecided(held, now);
          }
          ItemDecision d = v.decision(item, now, e);
          keys.publish(item.rule(), item.key(), s, held);
          return d;
        }
      } finally {
        s.unlock();
      }
      // Evicted between lookup and lock: look it up again.
      s = keys.state(item.rule(), item.key(), item.windows(), requested);
      if (s == null) {
        return full(item, requested);
      }
    }
  }

  /** Hints, on the locked state {@code s}, whether the next one-item decision is worth trying without the lock. */
  private static void markDenying(KeyState s, boolean fits) {
    if (s.denying == fits) {
      s.denying = !fits; // written only when it changes: a hot key's line is not dirtied for nothing
    }
  }

  /**
   * {@link #decideOne} on the store's clock, read at {@code at} ({@link Request#STORE_CLOCK}: read
   * now), that answers only whether the request is admitted.
   */
  boolean tryAcquire(Rule rule, String key, long cost, long at) {
    long requested = at == Request.STORE_CLOCK ? ticker.nowMicros() : at;
    List<Window> ws = rule.windowsFor(key);
    boolean admitted;
    while (true) {
      KeyState s = keys.state(rule, key, ws, requested);
      if (s == null) {
        keys.countFull(rule.name());
        admitted = false;
        break;
      }
      if (s.denying && s.countsBy(ws) && s.deniesWithoutLock(requested, cost)) {
        admitted = false;
        break;
      }
      s.lock();
      try {
        if (s.dead) {
          continue;
        }
        KeyState v = view(rule, s, ws);
        boolean first = v.lastSeen == Long.MIN_VALUE;
        long now = v.clamp(requested);
        Eval e = v.evaluate(now, cost);
        boolean admit = e.fits && cost > 0 && keys.room(s, v, now, cost, e);
        markDenying(s, e.fits);
        KeyState held = settle(s, v, admit, false, now, cost, e);
        if (first) {
          keys.firstDecided(held, now);
        }
        admitted = e.fits;
        keys.publish(rule, key, s, held);
        break;
      } finally {
        s.unlock();
      }
    }
    keys.maybeSweep(requested);
    // A shadow rule's item never blocks its request.
    return admitted || rule.shadow();
  }

  /**
   * The transaction. Bans first, without creating anything: an enforced item under a ban denies
   * the request (nothing of it is consumed; the other items are evaluated and reported); a shadow
   * item under a ban is reported banned, consumes nothing and blocks nothing. Then every other
   * item's state is locked, its ban read again, and decided ({@link #decideLocked}); still under
   * the locks, the items that count a denial toward their ban do ({@link BanCounts}: every item of
   * a ban rule when the request is denied for the use it asks, none when a ban in force denies
   * it). Then, unlocked, each consumed item with an audit value records it.
   */
  private List<ItemDecision> decideMany(List<ResolvedItem> items, long requested) {
    int n = items.size();
    ItemDecision[] out = new ItemDecision[n];
    boolean policies = false;
    boolean enforcedBan = false;
    for (int i = 0; i < n; i++) {
      ResolvedItem it = items.get(i);
      if (it.rule().ban() != null) {
        policies = true;
        long until = sides.bannedUntil(it.rule().name(), it.key(), requested);
        if (until != Long.MIN_VALUE) {
          out[i] = banned(it, until - requested);
          enforcedBan |= !it.rule().shadow();
        }
      } else if (it.audit() != null) {
        policies = true;
      }
    }
    long[] auditUntil = null;
    if (policies) {
      auditUntil = new long[n];
      Arrays.fill(auditUntil, Long.MIN_VALUE);
    }
    while (true) {
      KeyState[] states = new KeyState[n];
      int held = 0;
      boolean full = false;
      for (int i = 0; i < n; i++) {
        if (out[i] == null) {
          ResolvedItem it = items.get(i);
          states[i] = keys.state(it.rule(), it.key(), it.windows(), requested);
          full |= states[i] == null;
          held += states[i] == null ? 0 : 1;
        }
      }
      if (full) {
        fullBatch(items, states, out, requested);
        break;
      }
      KeyState[] lockOrder = held == n ? states.clone() : new KeyState[held];
      if (held < n) {
        for (int i = 0, k = 0; i < n; i++) {
          if (states[i] != null) {
            lockOrder[k++] = states[i];
          }
        }
      }
      Arrays.sort(lockOrder, Comparator.comparingLong(s -> s.order));
      if (lockAll(lockOrder, items, states, out, enforcedBan, auditUntil, requested)) {
        break;
      }
    }
    List<ItemDecision> decided = Arrays.asList(out);
    if (policies) {
      afterUnlock(items, decided, auditUntil, requested);
    }
    return decided;
  }

  /** The hook that runs once the states are unlocked: audit values recorded. */
  private void afterUnlock(List<ResolvedItem> items, List<ItemDecision> decided, long[] auditUntil, long requested) {
    for (int i = 0; i < items.size(); i++) {
      ResolvedItem it = items.get(i);
      if (auditUntil[i] != Long.MIN_VALUE) {
        sides.recordAudit(it.rule(), it.key(), it.audit(), auditUntil[i]);
      }
    }
  }

  /**
   * Under the states' locks: a ban that another request's denial started after this request
   * looked (before locking) denies as if it had been seen then. With {@link #countDenials} under
   * the same locks, reading a key's ban, deciding and counting its denial are one step, as in the
   * Redis script: the denial that reaches a ban's threshold is the last one its key is decided for.
   * Whether an enforced ban now denies the request.
   */
  private boolean bansSinceLooked(List<ResolvedItem> items, KeyState[] states, ItemDecision[] out, long requested) {
    boolean enforced = false;
    for (int i = 0; i < items.size(); i++) {
      ResolvedItem it = items.get(i);
      if (states[i] != null && it.rule().ban() != null) {
        long until = sides.bannedUntil(it.rule().name(), it.key(), requested);
        if (until != Long.MIN_VALUE) {
          out[i] = banned(it, until - requested);
          states[i] = null; // locked, and unlocked by the caller, but not decided
          enforced |= !it.rule().shadow();
        }
      }
    }
    return enforced;
  }

  /** Under the states' locks: the denials this request counts toward bans ({@link BanCounts}). */
  private void countDenials(List<ResolvedItem> items, ItemDecision[] out, long requested) {
    boolean[] counted = BanCounts.of(items, Arrays.asList(out));
    if (counted == null) {
      return;
    }
    for (int i = 0; i < items.size(); i++) {
      if (counted[i]) {
        sides.countDenial(items.get(i).rule(), items.get(i).key(), requested);
      }
    }
  }

  /**
   * Locks {@code lockOrder} (sorted by {@link KeyState#order}) in order, then decides; false,
   * deciding nothing, if any state turned out dead.
   */
  private boolean lockAll(KeyState[] lockOrder, List<ResolvedItem> items, KeyState[] states, ItemDecision[] out,
      boolean enforcedBan, long[] auditUntil, long requested) {
    int held = 0;
    try {
      for (; held < lockOrder.length; held++) {
        // The lock is not reentrant: a state listed twice is locked once.
        if (held == 0 || lockOrder[held] != lockOrder[held - 1]) {
          lockOrder[held].lock();
        }
      }
      for (KeyState s : lockOrder) {
        if (s.dead) {
          return false;
        }
      }
      boolean banned = enforcedBan;
      if (auditUntil != null) {
        banned |= bansSinceLooked(items, states, out, requested);
      }
      decideLocked(items, states, out, banned, auditUntil, requested);
      if (auditUntil != null) {
        countDenials(items, out, requested);
      }
      return true;
    } finally {
      for (int i = held - 1; i >= 0; i--) {
        if (i == 0 || lockOrder[i] != lockOrder[i - 1]) {
          lockOrder[i].unlock();
        }
      }
    }
  }

  /**
   * Called with every state locked: evaluate all, make room for all (logs that must grow), commit
   * all or none, then report into {@code out}. Items without a state (banned: already in
   * {@code out}) are skipped, and {@code enforcedBan} denies the request. When
   * {@code auditUntil} is not null, sets for each consumed item with an audit value when its
   * key's state becomes idle (the audit list lasts as long).
   */
  private void decideLocked(List<ResolvedItem> items, KeyState[] states, ItemDecision[] out, boolean enforcedBan,
      long[] auditUntil, long requested) {
    int n = items.size();
    Eval[] evals = new Eval[n];
    long[] nows = new long[n];
    boolean[] first = new boolean[n];
    KeyState[] views = new KeyState[n];
    boolean[] roomed = new boolean[n];
    boolean enforcedFit = !enforcedBan;
    for (int i = 0; i < n; i++) {
      if (states[i] == null) {
        continue;
      }
      ResolvedItem it = items.get(i);
      views[i] = view(it.rule(), states[i], it.windows());
      first[i] = views[i].lastSeen == Long.MIN_VALUE;
      nows[i] = views[i].clamp(requested);
      evals[i] = views[i].evaluate(nows[i], it.cost());
      if (!evals[i].fits && !it.rule().shadow()) {
        enforcedFit = false;
      }
    }
    if (enforcedFit) {
      // Growing before any commit keeps the transaction whole: a log denied its growth denies
      // the request, and room granted to the others is merely unused for now.
      for (int i = 0; i < n; i++) {
        long cost = items.get(i).cost();
        if (states[i] != null && evals[i].fits && cost > 0) {
          roomed[i] = keys.room(states[i], views[i], nows[i], cost, evals[i]);
          if (!roomed[i] && !items.get(i).rule().shadow()) {
            enforcedFit = false;
          }
        }
      }
    }
    for (int i = 0; i < n; i++) {
      if (states[i] == null) {
        continue;
      }
      ResolvedItem it = items.get(i);
      boolean admit = enforcedFit && evals[i].fits && it.cost() > 0;
      KeyState held = settle(states[i], views[i], admit, roomed[i], nows[i], it.cost(), evals[i]);
      if (auditUntil != null && admit && it.audit() != null && it.rule().audit() != null) {
        auditUntil[i] = held.idleAt(nows[i]);
      }
      if (first[i]) {
        keys.firstDecided(held, nows[i]);
      }
      out[i] = views[i].decision(it, nows[i], evals[i]);
      keys.publish(it.rule(), it.key(), states[i], held);
    }
  }

  private static ItemDecision banned(ResolvedItem item, long leftMicros) {
    return new ItemDecision(item.rule().name(), item.key(), item.cost(), false, DenyReason.BANNED, 0, List.of(),
        item.rule().shadow(), KeyState.ceilMillis(leftMicros));
  }

  /** A new key without room: nothing is consumed; each window says when room may free up. */
  ItemDecision full(ResolvedItem item, long now) {
    keys.countFull(item.rule().name());
    long retry = keys.fullRetryMicros(item.rule(), item.key(), item.windows(), now);
    long retryMs = retry < 0 ? WindowState.NEVER : KeyState.ceilMillis(retry);
    List<WindowState> ws = new ArrayList<>();
    for (Window w : item.windows()) {
      ws.add(new WindowState(w.limit(), w.periodMillis(), 0, retryMs, 0, true));
    }
    return new ItemDecision(item.rule().name(), item.key(), item.cost(), false, DenyReason.STORE_FULL, 0, ws,
        item.rule().shadow());
  }

  /**
   * The store is full for some new key: nothing is consumed; held keys report their state, banned
   * items (already in {@code out}) keep their answer.
   */
  private void fullBatch(List<ResolvedItem> items, KeyState[] states, ItemDecision[] out, long requested) {
    for (int i = 0; i < items.size(); i++) {
      if (out[i] != null) {
        continue;
      }
      ResolvedItem item = items.get(i);
      if (states[i] == null) {
        out[i] = full(item, requested);
        continue;
      }
      KeyState s = states[i];
      s.lock();
      try {
        KeyState v = view(item.rule(), s, item.windows());
        boolean first = v.lastSeen == Long.MIN_VALUE;
        long now = v.clamp(requested);
        out[i] = v.decision(item, now, v.evaluate(now, item.cost()));
        if (first) {
          keys.firstDecided(s, now);
        }
      } finally {
        s.unlock();
      }
    }
  }
}
