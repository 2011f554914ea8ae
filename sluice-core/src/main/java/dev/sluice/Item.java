package dev.sluice;

import dev.sluice.policy.LiveLimit;
import java.util.List;
import java.util.Objects;

/**
 * One part of a request: {@code cost} units of {@code rule} for {@code key}. Cost 0 is a peek.
 *
 * @param windows windows that replace the key's for this request only (Envoy's per-request
 *     {@code RateLimitOverride}), or null for the key's own (the rule's, an override's or a live
 *     limit's). State is shared with the key's own windows, matched by period.
 */
public record Item(String rule, String key, long cost, List<Window> windows) {
  /** @throws InvalidCostException if cost is negative */
  public Item {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(key, "key");
    if (cost < 0) {
      throw InvalidCostException.negative(rule, cost);
    }
    if (windows != null) {
      if (windows.isEmpty() || windows.size() > LiveLimit.MAX_WINDOWS) {
        throw new IllegalArgumentException("an item's own windows number 1 to " + LiveLimit.MAX_WINDOWS + ", were "
            + windows.size());
      }
      windows = List.copyOf(windows);
    }
  }

  public Item(String rule, String key, long cost) {
    this(rule, key, cost, null);
  }

  public static Item of(String rule, String key) {
    return new Item(rule, key, 1);
  }

  public static Item of(String rule, String key, long cost) {
    return new Item(rule, key, cost);
  }
}
