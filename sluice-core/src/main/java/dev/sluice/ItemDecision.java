package dev.sluice;

import java.util.List;
import java.util.Objects;

/**
 * The decision on one item, with every window's state.
 *
 * @param allowed whether this item alone would be admitted; the request is admitted only if all
 *     its items are
 * @param reason why it was denied, {@link DenyReason#NONE} if allowed
 * @param waitMs for a shaping rule: how long the admitted request must wait before it proceeds
 * @param shadow whether the item's rule is a shadow rule (its denials are reported, not enforced)
 * @param blockedMs for {@link DenyReason#BANNED}: how long the ban still lasts; for
 *     {@link DenyReason#DENY_LISTED}: {@link WindowState#NEVER}; otherwise 0. Items denied by a
 *     ban or a list were not decided by the store: their windows are empty.
 * @param leased whether the item was admitted from units this instance holds of a leased rule
 *     ({@code mode: leased}), without asking the store. Its windows are then this instance's view:
 *     {@code remaining} is what the store had left at this instance's last take plus the units it
 *     still holds (never above the limit), {@code resetAfterMs} the store's at that take, and
 *     other instances' use since is not in it. False for every item the store decided.
 */
public record ItemDecision(String rule, String key, long cost, boolean allowed, DenyReason reason, long waitMs,
    List<WindowState> windows, boolean shadow, long blockedMs, boolean leased) {

  /** A decision that is not answered from a lease. */
  public ItemDecision(String rule, String key, long cost, boolean allowed, DenyReason reason, long waitMs,
      List<WindowState> windows, boolean shadow, long blockedMs) {
    this(rule, key, cost, allowed, reason, waitMs, windows, shadow, blockedMs, false);
  }

  /** A decision made by the rule's windows (no ban, list or lease involved). */
  public ItemDecision(String rule, String key, long cost, boolean allowed, DenyReason reason, long waitMs,
      List<WindowState> windows, boolean shadow) {
    this(rule, key, cost, allowed, reason, waitMs, windows, shadow, 0, false);
  }

  public ItemDecision {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(reason, "reason");
    windows = List.copyOf(windows);
  }

  /**
   * The largest {@code retryAfterMs} over this item's exceeded windows; 0 if none; NEVER wins. For
   * a ban or a deny list: {@link #blockedMs}.
   */
  public long retryAfterMs() {
    if (reason == DenyReason.BANNED || reason == DenyReason.DENY_LISTED) {
      return allowed ? 0 : blockedMs;
    }
    long max = 0;
    for (WindowState w : windows) {
      if (w.exceeded()) {
        if (w.retryAfterMs() == WindowState.NEVER) {
          return WindowState.NEVER;
        }
        max = Math.max(max, w.retryAfterMs());
      }
    }
    return allowed ? 0 : max;
  }

  /** A copy of this decision for a request that was denied by another item (nothing consumed). */
  public ItemDecision withAllowed(boolean a, DenyReason r) {
    return new ItemDecision(rule, key, cost, a, r, waitMs, windows, shadow, blockedMs, leased);
  }
}
