package dev.sluice.internal.policy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * <p>Thread-safe: many threads record at once. Each rule has {@value #STRIPES} fronts, a thread
 * always recording through the same one: a front holds the last key recorded through it with its
 * count in its minute, so a key denied again and again (an attack) costs one compare-and-swap on a
 * cache line no other thread is likely to write, and no lock. The front's count and a generation,
 * changed each time the front is emptied, share one word: an add that read the front's key and
 * minute lands only if the front has not been emptied (and perhaps given another key) since, and
 * anything else takes the front's lock. The front is folded into the rule's sketch (under the
 * front's lock and then the rule's ring lock) when its key or minute changes, when its count
 * reaches {@value #FOLD_AT}, and by every {@link #drain} and {@link #merged read}: a record that
 * completed before either began is in what it sees, exactly. Folding adds a run of one key as one
 * {@link DenialSketch#add} of its length, which leaves the sketch as the run's single adds would.
 * The ring's lock is held for a fold and one add, and for copies (not merges) on {@link #top}.
 * Fronts take about 2.5 KB per rule.
 */
public final class MinuteSketches {
  public static final int MINUTES = 60;
  public static final int DEFAULT_MAX_RULES = 1_000;
  static final long MICROS_PER_MINUTE = 60_000_000L;
  /** Fronts per rule: enough that threads on a 2-to-16-core machine rarely share one. */
  static final int STRIPES = 16;
  /** A front's count is folded into the sketch once this large, well below the sketch's bound. */
  static final long FOLD_AT = 1L << 30;
  /** A front's word: its count in the low bits (at most {@link #FOLD_AT}), its generation above. */
  private static final int COUNT_BITS = 31;
  private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
  private static final long GENERATION = 1L << COUNT_BITS;
  private static final VarHandle HELD;

  static {
    try {
      HELD = MethodHandles.lookup().findVarHandle(Front.class, "held", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** What one rule accumulated for one minute since the last drain. */
  public record Drained(String rule, long minute, DenialSketch sketch) {}

  private final int capacity;
  private final int maxRules;
  /** {@link #STRIPES} but in the model check, where every thread shares one front. */
  private final int stripes;
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
    this(capacity, maxRules, STRIPES);
  }

  /** With {@code stripes} fronts per rule, a power of two. */
  MinuteSketches(int capacity, int maxRules, int stripes) {
    DenialSketch.checkCapacity(capacity);
    if (maxRules < 1) {
      throw new IllegalArgumentException("the most rules recorded must be at least 1, was " + maxRules);
    }
    if (Integer.bitCount(stripes) != 1) {
      throw new IllegalArgumentException("stripes must be a power of two, was " + stripes);
    }
    this.capacity = capacity;
    this.maxRules = maxRules;
    this.stripes = stripes;
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
      // The same key again in the same minute: added to the front, unless it was emptied meanwhile.
      // (A ring retired after this read held nothing of the last hour: what lands in it was late.)
      if (!ring.retired && front.adds(key, minute, n)) {
        return;
      }
      synchronized (front) {
        if (ring.retired) {
          continue; // expired between the lookup and the lock: a new ring takes it
        }
        // Only lock-free adds race this one now: a front is emptied under its lock.
        while (front.holds(key, minute, n)) {
          if (front.adds(key, minute, n)) {
            return;
          }
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
          if (n > FOLD_AT) {
            ring.add(key, minute, n); // more than a front holds: straight to the sketch
          } else {
            front.open(key, minute, n);
          }
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
        if (front.count() > 0) {
          synchronized (ring) {
            ring.fold(front);
          }
        }
      }
    }
  }

  /** The recording thread's stripe: fixed per thread, so two threads rarely share one. */
  private int stripe() {
    long id = Thread.currentThread().getId();
    return (int) ((id * 0x9E3779B97F4A7C15L) >>> 32) & (stripes - 1);
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
   * not yet in the ring's sketch. {@link #held} is read and added to without a lock; it is emptied,
   * and the key and minute changed, only under the front's monitor (taken before the ring's).
   * Padded so that two stripes' fronts do not share a cache line.
   */
  private static final class Front {
    long p0, p1, p2, p3, p4, p5, p6;
    /**
     * Written before the {@link #held} that opens the front with them, and read after it: an add
     * that read them lands only if {@link #held}'s generation is still the one it read first.
     */
    String key;
    long minute = Long.MIN_VALUE;
    /** The generation and count (see {@link #COUNT_BITS}); a count of zero: the front holds nothing. */
    volatile long held;
    long q0, q1, q2, q3, q4, q5, q6;

    long count() {
      return held & COUNT_MASK;
    }

    /** Whether the front holds a run of {@code key} in {@code minute} that {@code n} more fit. */
    boolean holds(String key, long minute, long n) {
      return runOf(held, key, minute, n);
    }

    /**
     * Adds {@code n} to the run if the front holds one of {@code key} in {@code minute} with room for
     * it; false if not, or if another thread changed the front between the reads and the add.
     */
    boolean adds(String key, long minute, long n) {
      long h = held;
      return runOf(h, key, minute, n) && HELD.compareAndSet(this, h, h + n);
    }

    /** Whether {@code h}, read from {@link #held} before the key and minute, is a run they fit. */
    private boolean runOf(long h, String key, long minute, long n) {
      long count = h & COUNT_MASK;
      return count > 0 && n <= FOLD_AT - count && this.minute == minute && key.equals(this.key);
    }

    /**
     * Empties the front and answers the count it held, changing its generation so that an add that
     * read it before lands nowhere; under the front's monitor.
     */
    long empty() {
      while (true) {
        long h = held;
        long count = h & COUNT_MASK;
        if (count == 0) {
          return 0;
        }
        if (HELD.compareAndSet(this, h, (h & ~COUNT_MASK) + GENERATION)) {
          return count;
        }
      }
    }

    /** Starts a run of {@code n} (at most {@link #FOLD_AT}) of a key in a minute; the front is empty. */
    void open(String key, long minute, long n) {
      this.key = key;
      this.minute = minute;
      held = held + n; // publishes the key and minute to adds that read it
    }
  }

  /** One rule's minutes; guarded by its own monitor. */
  private final class Ring {
    final long[] minutes = new long[MINUTES];
    /** Null when the slot's minute has nothing left to drain or read. */
    final DenialSketch[] sketches = new DenialSketch[MINUTES];
    final Front[] fronts = new Front[stripes];
    long newest = Long.MIN_VALUE;
    /** Read without the lock by a recorder holding only its front's. */
    volatile boolean retired;

    Ring() {
      Arrays.fill(minutes, Long.MIN_VALUE);
      for (int i = 0; i < fronts.length; i++) {
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
      long n = front.empty();
      if (n > 0) {
        add(front.key, front.minute, n);
        front.key = null; // an add that reads it finds the front empty anyway
      }
    }

    /** Adds {@code n} denials of {@code key} to {@code minute}'s sketch; the caller holds this ring's lock. */
    void add(String key, long minute, long n) {
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
