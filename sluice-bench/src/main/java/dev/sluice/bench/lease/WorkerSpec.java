package dev.sluice.bench.lease;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.LeasePolicy;
import dev.sluice.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one worker process does: its rule (exact or leased), the store, the key, when it measures
 * and at what demand; the run's start comes from the parent once every worker is ready. Passed
 * to the child as {@code name=value} arguments.
 *
 * @param rate requests per second this worker offers until {@code skewAtMs}, 0 for as fast as
 *     {@code inflight} allows (no pacing, no per-millisecond record)
 * @param skewAtMs milliseconds into the run at which the demand becomes {@code skewRate}; at or
 *     past {@code durationMs} for none
 */
public record WorkerSpec(String uri, String prefix, String key, boolean leased, Algorithm algorithm, long limit,
    long periodMs, int durationMs, double rate, int skewAtMs, double skewRate, int inflight) {

  /**
   * The one rule every worker of a run shares; leased mode with the defaults (1 s, 100 ms, 1 %).
   * Failure mode closed: a decision the store does not answer within the limiter's store timeout
   * is denied, so that what is counted is what the store and the leases admitted.
   */
  public Rule rule() {
    Rule.Builder b = Rule.builder("api").algorithm(algorithm).window(limit, Duration.ofMillis(periodMs))
        .failureMode(FailureMode.CLOSED);
    if (leased) {
      b.lease(LeasePolicy.DEFAULTS);
    }
    return b.build();
  }

  boolean paced() {
    return rate > 0;
  }

  /** Requests due {@code elapsedNanos} into the run: the integral of the paced demand. */
  long due(long elapsedNanos) {
    double ms = elapsedNanos / 1e6;
    double before = Math.min(ms, skewAtMs);
    double after = Math.max(0, ms - skewAtMs);
    return (long) ((before * rate + after * skewRate) / 1000);
  }

  public List<String> args() {
    List<String> a = new ArrayList<>();
    a.add("uri=" + uri);
    a.add("prefix=" + prefix);
    a.add("key=" + key);
    a.add("leased=" + leased);
    a.add("algorithm=" + algorithm.name());
    a.add("limit=" + limit);
    a.add("periodMs=" + periodMs);
    a.add("durationMs=" + durationMs);
    a.add("rate=" + rate);
    a.add("skewAtMs=" + skewAtMs);
    a.add("skewRate=" + skewRate);
    a.add("inflight=" + inflight);
    return a;
  }

  /** @throws IllegalArgumentException naming a missing or malformed argument */
  public static WorkerSpec parse(List<String> args) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("worker arguments are name=value, got '" + a + "'");
      }
      m.put(a.substring(0, eq), a.substring(eq + 1));
    }
    return new WorkerSpec(get(m, "uri"), get(m, "prefix"), get(m, "key"), Boolean.parseBoolean(get(m, "leased")),
        Algorithm.valueOf(get(m, "algorithm")), Long.parseLong(get(m, "limit")), Long.parseLong(get(m, "periodMs")),
        Integer.parseInt(get(m, "durationMs")),
        Double.parseDouble(get(m, "rate")), Integer.parseInt(get(m, "skewAtMs")),
        Double.parseDouble(get(m, "skewRate")), Integer.parseInt(get(m, "inflight")));
  }

  private static String get(Map<String, String> m, String name) {
    String v = m.get(name);
    if (v == null) {
      throw new IllegalArgumentException("worker argument '" + name + "' missing");
    }
    return v;
  }
}
