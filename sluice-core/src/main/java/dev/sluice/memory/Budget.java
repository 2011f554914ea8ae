package dev.sluice.memory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory store's two caps, keys and bytes, shared among rules. Every rule in force is
 * guaranteed {@code 1/(2n)} of each cap (n rules); the other half is a pool that any rule may
 * borrow from, first come, first served. A rule within its guarantee always gets room (unless rule
 * changes left borrowed keys beyond the new shares: the store never forgets a live key to make
 * room, so they leave when idle); beyond it, only while the pool has room. So no rule can take
 * another's guaranteed share, and a rule alone gets the whole store. The totals never exceed the
 * caps.
 *
 * <p>Counts change only when a key is created, grows or is removed, under this object's lock;
 * decisions on held keys never touch them. The lock is never held while a key's lock is taken.
 *
 * <p>It also keeps, for the store's {@code store_full} answers, lower bounds on when held keys
 * become idle ({@link Idle}): per rule, over all keys, and over the keys of rules that borrow.
 */
final class Budget {
  /** Why a reservation failed. */
  enum Refusal {
    /** The rule's table was retired by a rule change: look it up again. */
    RETIRED,
    /** The rule is beyond its guarantee and the shared pool is used up. */
    POOL,
    /** The store as a whole is at a cap. */
    STORE,
    /** Larger than the most one rule could ever hold. */
    NEVER
  }

  /** What one rule's table holds. Counts are written under the budget's lock. */
  static final class Account {
    final String rule;
    volatile long keys;
    volatile long bytes;
    boolean closed;
    /** Beyond its guarantee in keys or bytes. */
    volatile boolean borrowing;
    final Idle idle = new Idle();
    /** The earliest idle time the running sweep saw among this rule's keys; the sweeper's own. */
    long sweepSeen;

    Account(String rule) {
      this.rule = rule;
    }
  }

  /**
   * A lower bound on when the earliest of a set of keys becomes idle, {@link Long#MAX_VALUE} if
   * none. A sweep computes it afresh; a key decided for the first time lowers it. A key's idle
   * time only moves later as it admits units, so a bound read once stays a bound.
   */
  static final class Idle {
    private final AtomicLong value = new AtomicLong(Long.MAX_VALUE);
    /** What was lowered since the running sweep started: the sweep must not overwrite it. */
    private final AtomicLong sinceSweep = new AtomicLong(Long.MAX_VALUE);

    long get() {
      return value.get();
    }

    void lower(long t) {
      lowerTo(sinceSweep, t); // first: a sweep ending now reads it after replacing value
      lowerTo(value, t);
    }

    void sweepStarts() {
      sinceSweep.set(Long.MAX_VALUE);
    }

    void sweepEnds(long seen) {
      value.set(Math.min(seen, sinceSweep.get()));
      // A key lowered after the read above has lowered value after the set, or will.
      lowerTo(value, sinceSweep.get());
    }

    private static void lowerTo(AtomicLong a, long t) {
      long cur = a.get();
      while (t < cur && !a.compareAndSet(cur, t)) {
        cur = a.get();
      }
    }
  }

  private final long maxKeys;
  private final long maxBytes;
  private volatile long keys;
  private volatile long bytes;
  private long borrowedKeys;
  private long borrowedBytes;
  private long shareKeys;
  private long shareBytes;
  private long poolKeys;
  private long poolBytes;
  private final Set<Account> open = new LinkedHashSet<>();
  private Set<String> inForce = Set.of();
  private int rules;
  final Idle all = new Idle();
  final Idle borrowers = new Idle();

  Budget(long maxKeys, long maxBytes) {
    this.maxKeys = maxKeys;
    this.maxBytes = maxBytes;
    reshare();
  }

  long maxKeys() {
    return maxKeys;
  }

  long maxBytes() {
    return maxBytes;
  }

  long keys() {
    return keys;
  }

  long bytes() {
    return bytes;
  }

  synchronized int rules() {
    return rules;
  }

  synchronized long shareKeys() {
    return shareKeys;
  }

  synchronized long shareBytes() {
    return shareBytes;
  }

  /** Takes room for {@code k} keys and {@code b} bytes of {@code a}'s rule; null if granted. */
  synchronized Refusal reserve(Account a, long k, long b) {
    Refusal r = check(a, k, b);
    if (r != null) {
      return r;
    }
    borrowedKeys += over(a.keys + k, shareKeys) - over(a.keys, shareKeys);
    borrowedBytes += over(a.bytes + b, shareBytes) - over(a.bytes, shareBytes);
    a.keys += k;
    a.bytes += b;
    keys += k;
    bytes += b;
    updateBorrowing(a);
    return null;
  }

  /** What {@link #reserve} would answer now, taking nothing. */
  synchronized Refusal check(Account a, long k, long b) {
    if (a.closed) {
      return Refusal.RETIRED;
    }
    if (b > maxBytes || b > shareBytes + poolBytes) {
      return Refusal.NEVER;
    }
    long dk = over(a.keys + k, shareKeys) - over(a.keys, shareKeys);
    long db = over(a.bytes + b, shareBytes) - over(a.bytes, shareBytes);
    // The pool first: a rule beyond its guarantee gets room only when the pool has some, which
    // only a borrower's key leaving makes, whatever else leaves.
    if (dk > 0 && borrowedKeys + dk > poolKeys || db > 0 && borrowedBytes + db > poolBytes) {
      return Refusal.POOL;
    }
    if (keys + k > maxKeys || bytes + b > maxBytes) {
      return Refusal.STORE;
    }
    return null;
  }

  /** Gives back room of a key (or a key's growth) of {@code a}'s rule; nothing once it is closed. */
  synchronized void release(Account a, long k, long b) {
    if (a.closed) {
      return;
    }
    borrowedKeys -= over(a.keys, shareKeys) - over(a.keys - k, shareKeys);
    borrowedBytes -= over(a.bytes, shareBytes) - over(a.bytes - b, shareBytes);
    a.keys -= k;
    a.bytes -= b;
    keys -= k;
    bytes -= b;
    updateBorrowing(a);
  }

  /** A new table's account. */
  synchronized void open(Account a) {
    open.add(a);
    if (!inForce.contains(a.rule)) {
      reshare();
    }
  }

  /** A retired table's account: everything it held is given back at once. */
  synchronized void close(Account a) {
    if (a.closed) {
      return;
    }
    a.closed = true;
    borrowedKeys -= over(a.keys, shareKeys);
    borrowedBytes -= over(a.bytes, shareBytes);
    keys -= a.keys;
    bytes -= a.bytes;
    open.remove(a);
    if (!inForce.contains(a.rule)) {
      reshare();
    }
  }

  /** The names of the rules in force: each gets its guarantee from now on. */
  synchronized void rulesInForce(Collection<String> names) {
    inForce = Set.copyOf(names);
    reshare();
  }

  synchronized void clear() {
    for (Account a : new ArrayList<>(open)) {
      close(a);
    }
  }

  synchronized List<Account> accounts() {
    return new ArrayList<>(open);
  }

  /** Shares for the rules in force and those holding a table; counts of borrowed room to match. */
  private void reshare() {
    Set<String> names = new HashSet<>(inForce);
    for (Account a : open) {
      names.add(a.rule);
    }
    rules = Math.max(1, names.size());
    shareKeys = maxKeys / (2L * rules);
    shareBytes = maxBytes / (2L * rules);
    poolKeys = maxKeys - rules * shareKeys;
    poolBytes = maxBytes - rules * shareBytes;
    borrowedKeys = 0;
    borrowedBytes = 0;
    for (Account a : open) {
      borrowedKeys += over(a.keys, shareKeys);
      borrowedBytes += over(a.bytes, shareBytes);
      updateBorrowing(a);
    }
  }

  private void updateBorrowing(Account a) {
    boolean b = a.keys > shareKeys || a.bytes > shareBytes;
    if (b && !a.borrowing) {
      a.borrowing = true;
      // Its keys now count among the borrowers' (Idle.lower pairs with this: see idleAt).
      borrowers.lower(a.idle.get());
    } else if (!b) {
      a.borrowing = false;
    }
  }

  private static long over(long used, long share) {
    return Math.max(0, used - share);
  }

  /** A key of {@code a}'s rule becomes idle no earlier than {@code t}. */
  void idleAt(Account a, long t) {
    a.idle.lower(t);
    all.lower(t);
    // Read after lowering a.idle: an account turning borrower after this read lowers the
    // borrowers' bound from a.idle itself.
    if (a.borrowing) {
      borrowers.lower(t);
    }
  }

  /**
   * The earliest time a held key whose removal could make room for {@code a}'s rule becomes
   * idle, as far as is known: its own keys' and the borrowers' when the pool is used up, any
   * key's when the store is at a cap.
   */
  long roomAt(Account a, Refusal why) {
    if (why == Refusal.POOL) {
      return Math.min(a.idle.get(), borrowers.get());
    }
    return all.get();
  }
}
