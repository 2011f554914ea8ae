package dev.sluice.server.rlqs;

import java.util.HashMap;
import java.util.Map;

/**
 * {@link ConsumerRates} over the consumers of this service alone: the streams it holds. Bounded by
 * the consumers the service holds ({@link RateLimitQuotaService#MAX_CONSUMERS}).
 */
final class LocalConsumerRates implements ConsumerRates {
  private static final double ALPHA = 0.5;

  /** Per limit, per consumer, its averaged demand; NaN until its first report. */
  private final Map<Limit, Map<Long, double[]>> demand = new HashMap<>();

  @Override
  public synchronized void join(Limit limit, long id) {
    demand.computeIfAbsent(limit, l -> new HashMap<>()).putIfAbsent(id, new double[] {Double.NaN});
  }

  @Override
  public synchronized void report(Limit limit, long id, double d) {
    double[] avg = demand.computeIfAbsent(limit, l -> new HashMap<>()).computeIfAbsent(id,
        i -> new double[] {Double.NaN});
    avg[0] = Double.isNaN(avg[0]) ? d : ALPHA * d + (1 - ALPHA) * avg[0];
  }

  @Override
  public synchronized void leave(Limit limit, long id) {
    Map<Long, double[]> m = demand.get(limit);
    if (m != null) {
      m.remove(id);
      if (m.isEmpty()) {
        demand.remove(limit);
      }
    }
  }

  /** Per limit, the demand of its consumers that reported, summed: units per second. */
  synchronized Map<Limit, Double> demands() {
    Map<Limit, Double> out = new HashMap<>();
    demand.forEach((limit, m) -> {
      double sum = 0;
      for (double[] d : m.values()) {
        if (!Double.isNaN(d[0])) {
          sum += d[0];
        }
      }
      out.put(limit, sum);
    });
    return out;
  }

  @Override
  public synchronized double rate(Limit limit, long id, double whole) {
    Map<Long, double[]> m = demand.get(limit);
    if (m == null || m.isEmpty()) {
      return whole;
    }
    double own = m.containsKey(id) ? m.get(id)[0] : Double.NaN;
    double sum = 0;
    for (double[] d : m.values()) {
      if (!Double.isNaN(d[0])) {
        sum += d[0];
      }
    }
    if (Double.isNaN(own) || !(sum > 0)) {
      return whole / m.size();
    }
    return whole * own / sum;
  }
}
