package dev.sluice.policy;

import java.util.List;

/**
 * One page of a listing ordered by key.
 *
 * @param items at most the count asked for
 * @param next the cursor of the next page (pass it as {@code after}), null when this is the last
 */
public record Page<T>(List<T> items, String next) {
  public Page {
    items = List.copyOf(items);
  }
}
