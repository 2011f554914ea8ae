package dev.sluice.spi;

import java.util.Objects;

/**
 * One policy kept in the store: a live limit, a ban or an access-list entry of a rule. What the
 * value means is the limiter's business; the store keeps it as given.
 *
 * @param key the key (for lists: the entry)
 * @param value the encoded policy (for a live limit: {@code tier:<name>} or its windows), at most
 *     4 KiB
 * @param expiresAtMillis epoch milliseconds after which the record is gone, 0 for never
 */
public record PolicyRecord(PolicyKind kind, String rule, String key, String value, long expiresAtMillis) {

  public static final int MAX_VALUE_CHARS = 4096;

  public PolicyRecord {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    if (value.length() > MAX_VALUE_CHARS) {
      throw new IllegalArgumentException("policy value longer than " + MAX_VALUE_CHARS + " characters");
    }
  }

  /** Where a listing that ended with this record goes on: rule and key, a space between (rule names have none). */
  public String cursor() {
    return rule + ' ' + key;
  }
}
