package dev.sluice.internal.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * One instance's denials per rule and minute, as {@link DenialSketch}es: what it records until a
 * {@link #drain} hands it to the store (which merges every instance's), and what {@link #top}
 * reads when there is no such store.
 *
 * <p>A minute is {@code floor(epoch micros / 60,000,000)}, of the time the caller passes (the
 * limiter's {@code Ticker}). Each rule has a ring of {@value #MINUTES} slots, one per minute: a
 * record for a minute reuses the slot of the minute 60 before it, so what is older than 60
 * minutes is gone, drained or not, and a record for a minute 60 or more before the newest one
 * seen for its rule is not kept. Rules beyond {@code maxRules} are not recorded. Either refusal is
 * counted ({@link #droppedForRules}, {@link #droppedAsLate}), never thrown.
 *
 * <p>Bound: at most {@code maxRules × 60} sketches of k entries. A drain empties the slots it
 * hands out, so with a store that takes them each second a rule holds one or two sketches; with
 * none, {@link #top} reads the last hour held here. {@link #expire} forgets rules with nothing in
 * the last 60 minutes, which makes room for others (rules removed by a reload among them).
 *
 * <p>Thread-safe: many threads record at once. Each rule has {@value #STRIPES} fronts, one lock
 * each, a thread always recording through the same one: a front holds the last key recorded
 * through it with its count in its minute, so a key denied again and again (an attack) costs an
 * increment under a lock no other thread is likely to take. The front is folded into the rule's
 * sketch (under the rule's ring lock, taken after a front's) when its key or minute changes, when
 * its count reaches {@value #FOLD_AT}, and by every {@link #drain} and {@link #merged read}, which
 * take each front's lock first: a record that completed before either began is in what it sees,
 * exactly. Folding adds a run of one key as one {@link DenialSketch#add} of its length, which
 * leaves the sketch as the run's single adds would. The ring's lock is held for a fold and one
 * add, and for copies (not merges) on {@link #top}. Fronts take about 2.5 KB per rule.
 */
public final class MinuteSketches {
  public static final int MINUTES = 60;
  public static final int DEFAULT_MAX_RULES = 1_000;
  static final long MICROS_PER_MINUTE = 60_000_000L;
  /** Fronts per rule: enough that threads on a 2-to-16-core machine rarely share one. */
  static final int STRIPE_BITS = 4;
  static final int STRIPES = 1 << STRIPE_BITS;
  /** A front's count is folded into the sketch once this large, well below the sketch's bound. */
  static final long FOLD_AT = 1L << 30;

  /** What one rule accumulated for one minute since the last drain. */
  public record Drained(String rule, long minute, DenialSketch sketch) {}

  private final int capacity;
  private final int maxRules;
  private final ConcurrentHashMap<String, Ring> rings = new ConcurrentHashMap<>();
  /** Rings in the map or being put there; reserved before a put so the bound is never passed. */
  private final AtomicInteger ruleCount = new AtomicInteger();
  private final LongAdder droppedForRules = new LongAdder();
  private final LongAdder droppedAsLate = new LongAdder();

  public MinuteSketches() {
    this(DenialSketch.DEFAULT_CAPACITY, DEFAULT_MAX_RULES);
  }

  /**
   * @param capacity each sketch's k, 1 to {@value DenialSketch#MAX_CAPACITY}
   * @param maxRules the most rules recorded at once, at least 1
   */
  public MinuteSketches(int capacity, int maxRules) {
    DenialSketch.checkCapacity(capacity);
    if (maxRules < 1) {
      throw new IllegalArgumentException("the most rules recorded must be at least 1, was " + maxRules);
    }
    this.capacity = capacity;
    this.maxRules = maxRules;
  }

  /**
   * Counts {@code n} denials of {@code key} under {@code rule} at {@code nowMicros}.
   *
   * @throws IllegalArgumentException if the key is empty or n is not positive
   */
  public void record(String rule, String key, long n, long nowMicros) {
    if (n <= 0) {
      throw new IllegalArgumentException("a count of denials must be positive, was " + n);
    }
    if (key.isEmpty()) {
      throw new IllegalArgumentException("a sketch's key must not be empty");
    }
    long minute = Math.floorDiv(nowMicros, MICROS_PER_MINUTE);
    while (true) {
      Ring ring = ringOf(rule);
      if (ring == null) {
        droppedForRules.add(n);
        return;
      }
      Front front = ring.fronts[stripe()];
      synchronized (front) {
        if (ring.retired) {
          continue; // expired between the lookup and the lock: a new ring takes it
        }
        if (front.minute == minute && front.pending > 0 && n <= FOLD_AT - front.pending
            && key.equals(front.key)) {
          // The same key again in the same minute: held here until the key or minute changes.
          front.pending += n;
          return;
        }
        synchronized (ring) {
          if (ring.retired) {
            continue;
          }
          ring.fold(front);
          // A new minute enters the ring now, so that the rule's newest and its late refusals are
          // decided in the order of the records, as without the front.
          if (!ring.start(minute)) {
            droppedAsLate.add(n);
            return;
          }
          front.key = key;
          front.minute = minute;
          front.pending = n;
        }
        return;
      }
    }
  }

  /**
   * Hands out, and forgets, every (rule, minute) sketch recorded since the last drain, by rule and
   * then minute, for the 60 minutes up to the newest of each rule (older ones are forgotten, not
   * handed out). The sketches are the caller's.
   */
  public List<Drained> drain() {
    List<Drained> out = new ArrayList<>();
    for (Map.Entry<String, Ring> e : rings.entrySet()) {
      Ring ring = e.getValue();
      foldFronts(ring);
      synchronized (ring) {
        for (int s = 0; s < MINUTES; s++) {
          // A minute 60 or more before the rule's newest is over for the store as well: left out.
          if (ring.sketches[s] != null && ring.minutes[s] > ring.newest - MINUTES) {
            out.add(new Drained(e.getKey(), ring.minutes[s], ring.sketches[s]));
          }
          ring.sketches[s] = null;
        }
      }
    }
    out.sort(Comparator.comparing(Drained::rule).thenComparingLong(Drained::minute));
    return out;
  }

  /**
   * The {@code count} most-denied keys of {@code rule} over the {@code minutes} minutes up to and
   * including the one of {@code nowMicros}, from what is held here.
   *
   * @throws IllegalArgumentException if minutes is not between 1 and {@value #MINUTES}, or count is
   *     negative
   */
  public List<DenialSketch.Entry> top(String rule, int minutes, int count, long nowMicros) {
    return merged(rule, minutes, nowMicros).top(count);
  }

  /**
   * The merge of {@code rule}'s sketches over the {@code minutes} minutes up to and including the
   * one of {@code nowMicros}: its {@link DenialSketch#total} and {@link DenialSketch#floor} give
   * the bound of what {@link #top} reports.
   *
   * @throws IllegalArgumentException if minutes is not between 1 and {@value #MINUTES}
   */
  public DenialSketch merged(String rule, int minutes, long nowMicros) {
    if (minutes < 1 || minutes > MINUTES) {
      throw new IllegalArgumentException("minutes must be between 1 and " + MINUTES + ", was " + minutes);
    }
    long last = Math.floorDiv(nowMicros, MICROS_PER_MINUTE);
    long first = last - minutes + 1;
    DenialSketch result = new DenialSketch(capacity);
    Ring ring = rings.get(rule);
    if (ring == null) {
      return result;
    }
    List<DenialSketch> copies = new ArrayList<>();
    foldFronts(ring);
    synchronized (ring) {
      for (int s = 0; s < MINUTES; s++) {
        if (ring.sketches[s] != null && ring.minutes[s] >= first && ring.minutes[s] <= last) {
          copies.add(ring.sketches[s].copy());
        }
      }
    }
    // Merged outside the lock: recorders of this rule wait only for the copies.
    for (DenialSketch c : copies) {
      result.merge(c);
    }
    return result;
  }

  /**
   * Forgets every rule with nothing recorded in the 60 minutes up to the one of {@code nowMicros},
   * drained or not, freeing its place under the bound on rules.
   *
   * @return the number of rules forgotten
   */
  public int expire(long nowMicros) {
    long oldestKept = Math.floorDiv(nowMicros, MICROS_PER_MINUTE) - MINUTES + 1;
    int forgotten = 0;
    for (Map.Entry<String, Ring> e : rings.entrySet()) {
      Ring ring = e.getValue();
      synchronized (ring) {
        if (!ring.retired && ring.newest < oldestKept) {
          ring.retired = true;
          rings.remove(e.getKey(), ring);
          ruleCount.decrementAndGet();
          forgotten++;
        }
      }
    }
    return forgotten;
  }

  /** Denials not recorded because {@code maxRules} other rules were held. */
  public long droppedForRules() {
    return droppedForRules.sum();
  }

  /** Denials not recorded because their minute was 60 or more before the newest of their rule. */
  public long droppedAsLate() {
    return droppedAsLate.sum();
  }

  /** The number of rules held. */
  public int rules() {
    return rings.size();
  }

  /**
   * Moves what every front of the ring holds into its sketches, so that a drain or read that
   * follows sees each record that completed before it began.
   */
  private void foldFronts(Ring ring) {
    for (Front front : ring.fronts) {
      synchronized (front) {
        if (front.pending > 0) {
          synchronized (ring) {
            ring.fold(front);
          }
        }
      }
    }
  }

  /** The recording thread's stripe: fixed per thread, so two threads rarely share one. */
  private static int stripe() {
    long id = Thread.currentThread().getId();
    return (int) ((id * 0x9E3779B97F4A7C15L) >>> (64 - STRIPE_BITS));
  }

  private Ring ringOf(String rule) {
    Ring ring = rings.get(rule);
    if (ring != null) {
      return ring;
    }
    if (ruleCount.incrementAndGet() > maxRules) {
      ruleCount.decrementAndGet();
      return null;
    }
    Ring mine = new Ring();
    Ring theirs = rings.putIfAbsent(rule, mine);
    if (theirs != null) {
      ruleCount.decrementAndGet();
      return theirs;
    }
    return mine;
  }

  /**
   * The last key one stripe of threads recorded under a rule, with the denials of it in its minute
   * not yet in the ring's sketch; guarded by its own monitor, taken before the ring's. Padded so
   * that two stripes' fronts do not share a cache line.
   */
  private static final class Front {
    long p0, p1, p2, p3, p4, p5, p6;
    String key;
    long minute = Long.MIN_VALUE;
    /** Zero when the front holds nothing. */
    long pending;
    long q0, q1, q2, q3, q4, q5, q6;
  }

  /** One rule's minutes; guarded by its own monitor. */
  private final class Ring {
    final long[] minutes = new long[MINUTES];
    /** Null when the slot's minute has nothing left to drain or read. */
    final DenialSketch[] sketches = new DenialSketch[MINUTES];
    final Front[] fronts = new Front[STRIPES];
    long newest = Long.MIN_VALUE;
    /** Read without the lock by a recorder holding only its front's. */
    volatile boolean retired;

    Ring() {
      Arrays.fill(minutes, Long.MIN_VALUE);
      for (int i = 0; i < STRIPES; i++) {
        fronts[i] = new Front();
      }
    }

    /**
     * Takes a minute in, as the first of its denials would: false if it is no longer kept. The
     * minute's slot is claimed, so an older minute there is gone from now on.
     */
    boolean start(long minute) {
      if (newest != Long.MIN_VALUE && minute <= newest - MINUTES) {
        return false;
      }
      int s = (int) Math.floorMod(minute, (long) MINUTES);
      if (minutes[s] != minute) {
        // The slot held the minute 60 (or a multiple of 60) before: older than an hour, gone.
        minutes[s] = minute;
        sketches[s] = null;
      }
      newest = Math.max(newest, minute);
      return true;
    }

    /** Adds what the front holds to its minute's sketch and empties the front; the caller holds both locks. */
    void fold(Front front) {
      long n = front.pending;
      if (n == 0) {
        return;
      }
      front.pending = 0;
      String key = front.key;
      front.key = null;
      long minute = front.minute;
      int s = (int) Math.floorMod(minute, (long) MINUTES);
      if (minutes[s] != minute) {
        // A minute an hour later took the slot after this one started: the denials went with it.
        droppedAsLate.add(n);
        return;
      }
      DenialSketch sketch = sketches[s];
      if (sketch == null) {
        sketch = new DenialSketch(capacity);
        sketches[s] = sketch;
      }
      if (n > DenialSketch.MAX_TOTAL - sketch.total()) {
        droppedAsLate.add(n); // 2^53 denials in a minute: not a case to throw on a recording thread
        return;
      }
      sketch.add(key, n);
    }
  }
}
