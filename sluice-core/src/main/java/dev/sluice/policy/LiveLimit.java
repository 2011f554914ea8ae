package dev.sluice.policy;

import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.util.List;
import java.util.Objects;

/**
 * Windows given to one (rule, key) at run time: a named tier of the configuration, or windows of
 * its own. Kept in the store and applied by every instance; what the key already consumed stays
 * consumed (windows are matched by period). A live limit wins over the rule's configured
 * overrides for its key.
 *
 * @param tier the tier's name, or null when {@code windows} are given
 * @param windows the key's own windows, empty when a tier is named
 */
public record LiveLimit(String tier, List<Window> windows) {

  /** At most this many windows of its own. */
  public static final int MAX_WINDOWS = 16;

  /** @throws IllegalArgumentException unless exactly one of a tier and windows is given */
  public LiveLimit {
    windows = windows == null ? List.of() : List.copyOf(windows);
    if ((tier == null) == windows.isEmpty()) {
      throw new IllegalArgumentException("a live limit names a tier or gives windows, exactly one of them");
    }
    if (tier != null && !RuleSet.isTierName(tier)) {
      throw new IllegalArgumentException("tier must be 1-64 letters, digits, _ . -, was '" + tier + "'");
    }
    if (windows.size() > MAX_WINDOWS) {
      throw new IllegalArgumentException("a live limit has at most " + MAX_WINDOWS + " windows, had " + windows.size());
    }
  }

  public static LiveLimit tier(String name) {
    return new LiveLimit(Objects.requireNonNull(name, "tier"), List.of());
  }

  public static LiveLimit windows(List<Window> windows) {
    return new LiveLimit(null, Objects.requireNonNull(windows, "windows"));
  }

  /** The windows this limit gives under {@code rules}: its own, or its tier's; null for a tier not in force. */
  public List<Window> windowsUnder(RuleSet rules) {
    return tier == null ? windows : rules.tier(tier);
  }
}
