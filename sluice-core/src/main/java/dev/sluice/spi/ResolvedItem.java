package dev.sluice.spi;

import dev.sluice.Rule;
import dev.sluice.Window;
import java.util.List;

/**
 * An item whose rule has been looked up and whose windows (after overrides and live limits) are
 * known. Keys are validated; (rule, key) pairs within one batch are distinct.
 *
 * <p>The windows of one (rule, key) may differ from one decision to the next (a live limit set or
 * removed): a store keeps what was consumed, matching windows by period (see docs/algorithms.md).
 *
 * @param audit the value of the rule's audit attribute ({@link Rule#audit()}) for this request,
 *     which the store records in the same call if the item is consumed; null when there is none
 */
public record ResolvedItem(Rule rule, String key, long cost, List<Window> windows, String audit) {
  public ResolvedItem {
    windows = List.copyOf(windows);
  }

  public ResolvedItem(Rule rule, String key, long cost, List<Window> windows) {
    this(rule, key, cost, windows, null);
  }
}
