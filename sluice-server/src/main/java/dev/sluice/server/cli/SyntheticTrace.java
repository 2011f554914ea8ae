package dev.sluice.server.cli;

import dev.sluice.Item;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A reproducible synthetic trace: {@code requests} unit requests arriving as a Poisson process of
 * {@code rate} per second from t = 0, each for a key drawn uniformly from {@code user:0} …
 * {@code user:(keys−1)} and a rule drawn uniformly from {@code rules}.
 */
final class SyntheticTrace {
  private final long requests;
  private final int keys;
  private final double rate;
  private final List<String> rules;
  private final long seed;

  SyntheticTrace(long requests, int keys, double rate, List<String> rules, long seed) {
    if (requests < 0 || keys < 1 || !(rate > 0) || rules.isEmpty()) {
      throw new IllegalArgumentException("requests ≥ 0, keys ≥ 1, rate > 0 and one rule at least are needed");
    }
    this.requests = requests;
    this.keys = keys;
    this.rate = rate;
    this.rules = List.copyOf(rules);
    this.seed = seed;
  }

  void forEach(TraceSink sink) {
    SplittableRandom random = new SplittableRandom(seed);
    String[] keyNames = new String[keys];
    double meanGapMicros = 1_000_000 / rate;
    double micros = 0;
    for (long i = 1; i <= requests; i++) {
      micros += -Math.log(1 - random.nextDouble()) * meanGapMicros;
      int k = random.nextInt(keys);
      String key = keyNames[k];
      if (key == null) {
        key = keyNames[k] = "user:" + k;
      }
      String rule = rules.get(rules.size() == 1 ? 0 : random.nextInt(rules.size()));
      sink.accept((long) (micros / 1000), List.of(new Item(rule, key, 1)), i);
    }
  }
}
