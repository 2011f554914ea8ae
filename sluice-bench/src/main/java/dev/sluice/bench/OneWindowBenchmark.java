package dev.sluice.bench;

import org.openjdk.jmh.annotations.Param;

/**
 * The one-window rule (100/1s, and 1,000,000,000/1s so that decisions are admitted), where every
 * peer can take part.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -jar sluice-bench/target/sluice-bench.jar OneWindowBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -t 1
 * </pre>
 *
 * Repeat with {@code -t 2} and {@code -t 4}; add {@code -prof gc} for allocation per decision.
 */
public class OneWindowBenchmark extends AcquireBenchmark {
  @Param({"baseline", "sluice", "sluice_token_bucket", "sluice_decision", "bucket4j",
      "bucket4j_synchronized", "resilience4j", "guava"})
  public String impl;

  @Param({"ONE_WINDOW", "ONE_WINDOW_ADMITTING"})
  public String rule;

  @Param({"1", "10000"})
  public int keys;

  @Override
  String impl() {
    return impl;
  }

  @Override
  String rule() {
    return rule;
  }

  @Override
  int keyCount() {
    return keys;
  }
}
