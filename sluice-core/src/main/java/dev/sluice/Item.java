package dev.sluice;

import java.util.Objects;

/** One part of a request: {@code cost} units of {@code rule} for {@code key}. Cost 0 is a peek. */
public record Item(String rule, String key, long cost) {
  /** @throws InvalidCostException if cost is negative */
  public Item {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(key, "key");
    if (cost < 0) {
      throw InvalidCostException.negative(rule, cost);
    }
  }

  public static Item of(String rule, String key) {
    return new Item(rule, key, 1);
  }

  public static Item of(String rule, String key, long cost) {
    return new Item(rule, key, cost);
  }
}
