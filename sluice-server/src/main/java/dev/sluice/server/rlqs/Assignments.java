package dev.sluice.server.rlqs;

/**
 * The arithmetic of assignments (docs/scaling.md, §5 "One budget"): the token bucket for a rate,
 * the units that cover all it can admit, and the largest bucket a number of units covers.
 */
final class Assignments {
  /** Envoy refills a token bucket at this interval, unless a fill of one token takes longer. */
  static final long FILL_MICROS = 100_000;

  private Assignments() {}

  /**
   * The token bucket for {@code rate} units per second valid for {@code ttlMicros}: fill interval
   * f = 100 ms, or 1 ÷ rate if longer; k = ⌈rate·f⌉ tokens per fill; a bucket of k. {@code DENY_ALL}
   * for a rate of 0.
   */
  static Assignment forRate(double rate, long ttlMicros) {
    if (!(rate > 0)) {
      return Assignment.deny(ttlMicros);
    }
    long f = Math.max(FILL_MICROS, wholeMillis((long) Math.ceil(1e6 / rate)));
    long k = Math.max(1, (long) Math.ceil(rate * f / 1e6));
    return new Assignment(false, k, k, f, ttlMicros);
  }

  /**
   * All the assignment can admit until its TTL ends, plus one fill for the reply's flight:
   * b + k·⌈(τ + f) ÷ f⌉ (a full bucket, then a fill each interval). 0 for {@code DENY_ALL}.
   */
  static long cover(Assignment a) {
    if (a.denyAll()) {
      return 0;
    }
    long fills = ceilDiv(a.ttlMicros() + a.fillMicros(), a.fillMicros());
    return Math.addExact(a.maxTokens(), Math.multiplyExact(a.tokensPerFill(), fills));
  }

  /**
   * The fastest assignment no faster than {@code a} whose cover fits in {@code units}: fewer tokens
   * per 100 ms fill, or one token per longer fill; {@code DENY_ALL} when {@code units} cover less
   * than that.
   */
  static Assignment fit(Assignment a, long units) {
    if (a.denyAll() || cover(a) <= units) {
      return a;
    }
    long ttl = a.ttlMicros();
    long f = Math.max(FILL_MICROS, a.fillMicros());
    long fills = ceilDiv(ttl + f, f);
    long k = Math.min(a.tokensPerFill(), units / (1 + fills));
    if (k >= 1) {
      return new Assignment(false, k, k, f, ttl);
    }
    // One token per fill: b + ⌈(τ + f) ÷ f⌉ ≤ units when f ≥ τ ÷ (units − 2).
    if (units >= 3) {
      long longer = Math.max(f, wholeMillis(ceilDiv(ttl, units - 2)));
      Assignment one = new Assignment(false, 1, 1, longer, ttl);
      if (cover(one) <= units) {
        return one;
      }
    }
    return Assignment.deny(ttl);
  }

  /** Fill intervals are whole milliseconds, rounded up: slower, never faster than the cover allows. */
  private static long wholeMillis(long micros) {
    return ceilDiv(micros, 1000) * 1000;
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }
}
