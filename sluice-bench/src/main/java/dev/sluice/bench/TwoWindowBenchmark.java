package dev.sluice.bench;

import org.openjdk.jmh.annotations.Param;

/**
 * The two-window rule (20/60s + 5/3s, and 100,000,000/1s + 20,000,000/100ms so that decisions are
 * admitted). Resilience4j and Guava check one rate per limiter and cannot take part.
 *
 * <pre>
 * ./mvnw -q -pl sluice-bench -am package -DskipTests
 * java -jar sluice-bench/target/sluice-bench.jar TwoWindowBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s -t 1
 * </pre>
 *
 * Repeat with {@code -t 2} and {@code -t 4}; add {@code -prof gc} for allocation per decision.
 */
public class TwoWindowBenchmark extends AcquireBenchmark {
  @Param({"baseline", "sluice", "sluice_token_bucket", "sluice_decision", "bucket4j", "bucket4j_probe",
      "bucket4j_synchronized"})
  public String impl;

  @Param({"TWO_WINDOWS", "TWO_WINDOWS_ADMITTING"})
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
