package dev.sluice.spi;

import dev.sluice.Rule;
import dev.sluice.Window;
import java.util.List;

/**
 * An item whose rule has been looked up and whose windows (after overrides) are known. Keys are
 * validated; (rule, key) pairs within one batch are distinct.
 */
public record ResolvedItem(Rule rule, String key, long cost, List<Window> windows) {
  public ResolvedItem {
    windows = List.copyOf(windows);
  }
}
