package dev.sluice.server.rlqs;

import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.server.rlqs.ConsumerRates.Limit;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.BucketId;
import io.envoyproxy.envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports.BucketQuotaUsage;
import java.util.List;

/**
 * One bucket of one stream, a consumer of its (rule, key): its demand, the units it holds from the
 * store's exact state, and the assignment last sent. Confined to its stream's serial executor.
 */
final class Consumer {
  /** The TTL of a bucket's first assignment, before any report spacing is seen: 2 × 1 s. */
  static final long FIRST_TTL_MICROS = 2_000_000;
  /** TTLs stay within 2 × 100 ms and 2 × 10 min, whatever the spacing of reports seen. */
  static final long MIN_TTL_MICROS = 200_000;
  static final long MAX_TTL_MICROS = 1_200_000_000;
  /** A strategy is re-sent (Envoy keeps its bucket) unless the rate moved by more than this share. */
  static final double RATE_TOLERANCE = 0.10;

  final long id;
  final BucketId bucketId;
  final Limit limit;
  /** What it counts against the service's bound on held buckets. */
  final long bytes;
  /** Units taken from the store for this consumer and not yet reported used. */
  private long held;
  /** The assignment last sent; null before the first and once silent. */
  private Assignment current;
  private long expiresMicros;
  private long lastReportMicros;
  /** The spacing of this bucket's reports, as this service saw them; 0 until two were seen. */
  private long spacingMicros;
  private boolean reported;
  private boolean silent;

  Consumer(long id, BucketId bucketId, Limit limit, long bytes) {
    this.id = id;
    this.bucketId = bucketId;
    this.limit = limit;
    this.bytes = bytes;
  }

  /**
   * Answers one report: counts its demand, uses its allowed count from the units held, tops the
   * units up to the next assignment's cover and returns that assignment — the same strategy again
   * unless the rate moved by more than 10 %, a slower one if the store granted less, {@code DENY_ALL}
   * if it covers less than one fill.
   */
  Assignment report(BucketQuotaUsage u, Rule rule, long now, RlqsContext ctx) {
    boolean fresh = current == null || now >= expiresMicros;
    if (fresh) {
      // Expired or silent: the units held were dropped with the grant; a new one starts.
      held = 0;
      current = null;
      if (silent) {
        silent = false;
        reported = false;
        ctx.rates().join(limit, id);
      }
    } else {
      spacingMicros = now - lastReportMicros;
    }
    // The counts are uint64: one of 2^63 or more reads as a negative long, and must use up the
    // units held, never add to them.
    long allowed = u.getNumRequestsAllowed();
    held = allowed < 0 ? 0 : Math.max(0, held - allowed);
    double elapsed = u.getTimeElapsed().getSeconds() + u.getTimeElapsed().getNanos() / 1e9;
    double demand = (unsigned(allowed) + unsigned(u.getNumRequestsDenied())) / elapsed;
    List<Window> windows = rule.windowsFor(limit.key());
    double whole = wholeRate(windows);
    double rate;
    if (!reported) {
      // A bucket's first report is its watch: the fallback rate, its demand counted from now on.
      rate = ctx.rates().rate(limit, id, whole);
      ctx.rates().report(limit, id, demand);
      reported = true;
    } else {
      ctx.rates().report(limit, id, demand);
      rate = ctx.rates().rate(limit, id, whole);
    }
    long ttl = ttl();
    Assignment want = Assignments.forRate(rate, ttl);
    if (current != null && !current.denyAll() && !want.denyAll()
        && Math.abs(want.rate() - current.rate()) <= RATE_TOLERANCE * current.rate()) {
      want = current.withTtl(ttl);
    }
    long cover = Assignments.cover(want);
    if (cover > held) {
      held += ctx.take(rule, limit.key(), windows, cover - held);
    }
    current = Assignments.fit(want, held);
    expiresMicros = now + ttl;
    lastReportMicros = now;
    return current;
  }

  /** The TTL of the next assignment: twice the spacing of this bucket's reports. */
  long ttl() {
    return spacingMicros <= 0 ? FIRST_TTL_MICROS : Math.min(MAX_TTL_MICROS, Math.max(MIN_TTL_MICROS,
        2 * spacingMicros));
  }

  /**
   * What the sweep does with this consumer at {@code now}: {@code true} when it is to be abandoned
   * (10 TTLs without a report). Silent for one TTL, it stops drawing on the limit: its units are
   * dropped (Envoy may still admit under its assignment until it expires, so they are not given
   * back) and its assignment is no longer extended.
   */
  boolean sweep(long now, RlqsContext ctx) {
    long tau = current != null ? current.ttlMicros() : ttl();
    long since = now - lastReportMicros;
    if (since > 10 * tau) {
      return true;
    }
    if (since > tau && !silent) {
      silent = true;
      held = 0;
      current = null;
      ctx.rates().leave(limit, id);
    }
    return false;
  }

  private static double unsigned(long v) {
    return v >= 0 ? v : (v >>> 1) * 2.0;
  }

  /** L ÷ P of the tightest window, in units per second. */
  static double wholeRate(List<Window> windows) {
    double min = Double.POSITIVE_INFINITY;
    for (Window w : windows) {
      min = Math.min(min, w.limit() * 1e6 / w.periodMicros());
    }
    return min;
  }
}
