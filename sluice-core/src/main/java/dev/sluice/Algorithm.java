package dev.sluice;

import java.util.Locale;

/**
 * How a rule counts. A rule picks one; all of its windows use it. See {@code docs/algorithms.md}
 * for each one's exact semantics, its bound and its memory.
 */
public enum Algorithm {
  /** Exact rolling window: in every interval (t−P, t] admitted cost ≤ L. The default. */
  SLIDING_LOG,
  /** Rolling window from sub-bucket counters; conservative (never admits more than the log). */
  SLIDING_WINDOW,
  /** Counters aligned to multiples of P since the Unix epoch (UTC). */
  FIXED_WINDOW,
  /** GCRA: a bucket of L refilled smoothly at L/P. */
  TOKEN_BUCKET,
  /** Shaping: admitted requests start at a steady L/P and may have to wait for their slot. */
  LEAKY_BUCKET;

  /** The name used in configuration files and on the wire, e.g. {@code sliding_log}. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses a configuration name such as {@code token_bucket}.
   *
   * @throws IllegalArgumentException naming the accepted values when {@code name} is none of them
   */
  public static Algorithm fromConfigName(String name) {
    for (Algorithm a : values()) {
      if (a.configName().equals(name)) {
        return a;
      }
    }
    throw new IllegalArgumentException(
        "unknown algorithm '" + name + "'; expected one of sliding_log, sliding_window, fixed_window, token_bucket, leaky_bucket");
  }
}
