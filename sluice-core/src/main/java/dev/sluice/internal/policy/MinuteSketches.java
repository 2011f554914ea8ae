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
 * <p>Thread-safe: many threads record at once. Each rule's ring has its own lock, held for one
 * {@link DenialSketch#add} on record and for copies (not merges) on {@link #top}.
 */
public final class MinuteSketches {
  public static final int MINUTES = 60;
  public static final int DEFAULT_MAX_RULES = 1_000;
  static final long MICROS_PER_MINUTE = 60_000_000L;

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
      synchronized (ring) {
        if (ring.retired) {
          continue; // expired between the lookup and the lock: a new ring takes it
        }
        if (!ring.record(key, n, minute)) {
          droppedAsLate.add(n);
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

  /** One rule's minutes; guarded by its own monitor. */
  private final class Ring {
    final long[] minutes = new long[MINUTES];
    /** Null when the slot's minute has nothing left to drain or read. */
    final DenialSketch[] sketches = new DenialSketch[MINUTES];
    long newest = Long.MIN_VALUE;
    boolean retired;

    Ring() {
      Arrays.fill(minutes, Long.MIN_VALUE);
    }

    /** False if the minute is no longer kept. */
    boolean record(String key, long n, long minute) {
      if (newest != Long.MIN_VALUE && minute <= newest - MINUTES) {
        return false;
      }
      int s = (int) Math.floorMod(minute, (long) MINUTES);
      if (minutes[s] != minute) {
        // The slot held the minute 60 (or a multiple of 60) before: older than an hour, gone.
        minutes[s] = minute;
        sketches[s] = null;
      }
      DenialSketch sketch = sketches[s];
      if (sketch == null) {
        sketch = new DenialSketch(capacity);
        sketches[s] = sketch;
      }
      if (n > DenialSketch.MAX_TOTAL - sketch.total()) {
        return false; // 2^53 denials in a minute: not a case to throw on a recording thread
      }
      sketch.add(key, n);
      newest = Math.max(newest, minute);
      return true;
    }
  }
}
