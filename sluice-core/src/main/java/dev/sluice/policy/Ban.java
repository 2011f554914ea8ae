package dev.sluice.policy;

import java.util.Objects;

/**
 * A ban in force: every request naming {@code key} under {@code rule} is denied until
 * {@code untilMillis} (epoch milliseconds).
 *
 * @param automatic whether the rule's {@link dev.sluice.BanPolicy} started it (else an operator did)
 */
public record Ban(String rule, String key, long untilMillis, boolean automatic) {
  public Ban {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(key, "key");
  }
}
