package dev.sluice.server.metrics;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Ticker;
import dev.sluice.WindowState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Decisions per rule over the last minutes, for the dashboard: the same outcomes as
 * {@code sluice_decisions_total} and {@code sluice_near_limit_total}, counted the same way, plus a
 * ring of {@value #BUCKETS} buckets of {@value #BUCKET_SECONDS} s each.
 *
 * <p>A decision only adds to striped counters (a map lookup and a {@link LongAdder} per item, as
 * the metrics do); the ring is rolled when it is read, so that a service nobody watches does no
 * work for it. A bucket holds the counts of the rules that had traffic in it, at most
 * {@value #RULES_PER_BUCKET} of them, the busiest; the rest are summed under {@link #OTHERS}: with
 * 10,000 rules the ring stays within about {@value #BUCKETS} × {@value #RULES_PER_BUCKET} entries.
 * Counts land in the bucket in which they were read, which polling every 2 s keeps within 2 s of
 * when they happened.
 */
public final class DecisionRates implements DecisionListener {
  public static final int BUCKET_SECONDS = 5;
  public static final int BUCKETS = 60;
  static final int RULES_PER_BUCKET = 500;
  /** The name under which a bucket sums the rules beyond its busiest. */
  public static final String OTHERS = "";
  /** Fields of a count: allowed, denied, shadow-denied, degraded, near limit. */
  public static final int ALLOWED = 0;
  public static final int DENIED = 1;
  public static final int SHADOW_DENIED = 2;
  public static final int DEGRADED = 3;
  public static final int NEAR_LIMIT = 4;
  static final int FIELDS = 5;

  private static final long BUCKET_MICROS = BUCKET_SECONDS * 1_000_000L;

  private final Ticker ticker;
  private final ConcurrentHashMap<String, LongAdder[]> totals = new ConcurrentHashMap<>();
  // Guarded by this: the ring, and the totals as they were at the last roll.
  private final Map<String, long[]>[] ring;
  private final long[] ringIndex = new long[BUCKETS];
  private final Map<String, long[]> atLastRoll = new HashMap<>();
  private long lastRoll = Long.MIN_VALUE;

  @SuppressWarnings("unchecked")
  public DecisionRates(Ticker ticker) {
    this.ticker = ticker;
    this.ring = new Map[BUCKETS];
    java.util.Arrays.fill(ringIndex, Long.MIN_VALUE);
  }

  @Override
  public void onDecision(Request request, Decision d, long storeNanos) {
    for (ItemDecision it : d.items()) {
      int outcome;
      if (d.degraded()) {
        outcome = DEGRADED;
      } else if (it.shadow() && !it.allowed()) {
        outcome = SHADOW_DENIED;
      } else {
        outcome = d.allowed() ? ALLOWED : DENIED;
      }
      LongAdder[] c = totals.get(it.rule());
      if (c == null) {
        c = totals.computeIfAbsent(it.rule(), r -> newCounters());
      }
      c[outcome].increment();
      if (d.allowed() && nearLimit(it)) {
        c[NEAR_LIMIT].increment();
      }
    }
  }

  private static LongAdder[] newCounters() {
    LongAdder[] c = new LongAdder[FIELDS];
    for (int i = 0; i < FIELDS; i++) {
      c[i] = new LongAdder();
    }
    return c;
  }

  /** As {@link SluiceMetrics}: an admitted item that left some window under 20% of its limit. */
  private static boolean nearLimit(ItemDecision it) {
    for (WindowState w : it.windows()) {
      if (w.remaining() * 5 < w.limit()) {
        return true;
      }
    }
    return false;
  }

  /**
   * What the ring holds now.
   *
   * @param totals per rule, every count since the service started
   * @param series per rule (and {@link #OTHERS}), the counts of each bucket, oldest first:
   *     {@code series.get(rule)[bucket][field]}; a rule without traffic in the ring is absent
   */
  public record Snapshot(Map<String, long[]> totals, Map<String, long[][]> series) {}

  /** Rolls the ring to now and reads it. */
  public synchronized Snapshot read() {
    long now = ticker.nowMicros() / BUCKET_MICROS;
    Map<String, long[]> current = new HashMap<>();
    totals.forEach((rule, c) -> {
      long[] v = new long[FIELDS];
      for (int i = 0; i < FIELDS; i++) {
        v[i] = c[i].sum();
      }
      current.put(rule, v);
    });
    roll(now, current);
    Map<String, long[][]> series = new HashMap<>();
    for (int b = 0; b < BUCKETS; b++) {
      long index = now - (BUCKETS - 1) + b;
      int slot = (int) Math.floorMod(index, (long) BUCKETS);
      if (ringIndex[slot] != index || ring[slot] == null) {
        continue;
      }
      int bucket = b;
      ring[slot].forEach((rule, v) -> series.computeIfAbsent(rule, r -> new long[BUCKETS][FIELDS])[bucket] = v);
    }
    return new Snapshot(current, series);
  }

  /** Adds what happened since the last roll to the bucket of {@code now}. */
  private void roll(long now, Map<String, long[]> current) {
    List<Map.Entry<String, long[]>> deltas = new ArrayList<>();
    for (Map.Entry<String, long[]> e : current.entrySet()) {
      long[] before = atLastRoll.get(e.getKey());
      long[] delta = new long[FIELDS];
      long sum = 0;
      for (int i = 0; i < FIELDS; i++) {
        delta[i] = e.getValue()[i] - (before == null ? 0 : before[i]);
        sum += delta[i];
      }
      if (sum > 0) {
        deltas.add(Map.entry(e.getKey(), delta));
      }
      atLastRoll.put(e.getKey(), e.getValue());
    }
    boolean first = lastRoll == Long.MIN_VALUE;
    lastRoll = now;
    if (first || deltas.isEmpty()) {
      // The first read finds what came before the ring existed: that is in the totals only.
      if (!first) {
        bucket(now);
      }
      return;
    }
    Map<String, long[]> b = bucket(now);
    // The busiest first, so that those beyond the bucket's bound are the quietest.
    deltas.sort((x, y) -> Long.compare(total(y.getValue()), total(x.getValue())));
    for (Map.Entry<String, long[]> e : deltas) {
      long[] v = b.get(e.getKey());
      if (v == null && b.size() >= RULES_PER_BUCKET) {
        v = b.computeIfAbsent(OTHERS, r -> new long[FIELDS]);
      } else if (v == null) {
        v = new long[FIELDS];
        b.put(e.getKey(), v);
      }
      for (int i = 0; i < FIELDS; i++) {
        v[i] += e.getValue()[i];
      }
    }
  }

  private static long total(long[] v) {
    return v[ALLOWED] + v[DENIED] + v[SHADOW_DENIED] + v[DEGRADED];
  }

  private Map<String, long[]> bucket(long index) {
    int slot = (int) Math.floorMod(index, (long) BUCKETS);
    if (ringIndex[slot] != index || ring[slot] == null) {
      ringIndex[slot] = index;
      ring[slot] = new HashMap<>();
    }
    return ring[slot];
  }
}
