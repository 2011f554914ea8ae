package dev.sluice.spi;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import java.util.List;

/**
 * Which items of a decided request count a denial toward their rule's automatic ban, the same on
 * every store (docs/policies.md, "Bans and audit in the store").
 *
 * <p>A ban exists for a caller refused again and again, whichever limit refuses it: a request
 * denied for the use it asks (an enforced item over its windows, its cost above a limit, or a wait
 * above its {@code max_wait}) counts one denial for every item whose rule bans, including items
 * that had room. A shadow item over its own windows counts even when the request is admitted (its
 * rule shows which keys a ban would stop). Nothing counts when an enforced item is under a ban in
 * force: a banned key retried must not extend its own ban, and an instance that knows the ban
 * answers such a request without the store, so the store must count nothing for it either. A
 * denial because the store is full is the store's lack of room, not the caller's doing: it counts
 * nothing by itself. A banned item never counts.
 */
public final class BanCounts {
  private BanCounts() {}

  /** Whether {@code r} is a denial for the use asked, which counts toward bans. */
  public static boolean counts(DenyReason r) {
    return r == DenyReason.LIMIT_EXCEEDED || r == DenyReason.COST_EXCEEDS_LIMIT
        || r == DenyReason.WAIT_EXCEEDS_MAX_WAIT;
  }

  /**
   * For each of {@code items}, decided as {@code decided} (same order), whether it counts a
   * denial toward its rule's ban; null when none does.
   */
  public static boolean[] of(List<ResolvedItem> items, List<ItemDecision> decided) {
    boolean deniedForUse = false;
    int n = items.size();
    for (int i = 0; i < n; i++) {
      ItemDecision d = decided.get(i);
      if (!d.shadow()) {
        if (d.reason() == DenyReason.BANNED) {
          return null;
        }
        deniedForUse |= counts(d.reason());
      }
    }
    boolean[] out = null;
    for (int i = 0; i < n; i++) {
      DenyReason r = decided.get(i).reason();
      if (items.get(i).rule().ban() != null && r != DenyReason.BANNED && (deniedForUse || counts(r))) {
        if (out == null) {
          out = new boolean[n];
        }
        out[i] = true;
      }
    }
    return out;
  }
}
