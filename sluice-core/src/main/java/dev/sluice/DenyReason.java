package dev.sluice;

/** Why an item was denied. */
public enum DenyReason {
  /** The item was allowed. */
  NONE,
  /** At least one window has no room for the cost now. */
  LIMIT_EXCEEDED,
  /** The cost is larger than a window's limit; it can never be admitted. */
  COST_EXCEEDS_LIMIT,
  /** For leaky buckets: the wait for a slot would be longer than {@code max_wait}. */
  WAIT_EXCEEDS_MAX_WAIT,
  /** The store is full (memory store key cap) and refuses new keys. */
  STORE_FULL,
  /** The store failed and the rule's failure mode is {@code closed}. */
  STORE_UNAVAILABLE,
  /** The key is banned under the rule (automatically or by an operator) until a given time. */
  BANNED,
  /** The key is on the rule's deny list. */
  DENY_LISTED;

  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
