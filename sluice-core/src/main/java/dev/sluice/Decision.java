package dev.sluice;

import java.util.List;

/**
 * The outcome of a request. Denials consume nothing anywhere.
 *
 * @param allowed whether the request was admitted (every enforced item allowed)
 * @param retryAfterMs the largest {@code retryAfterMs} over denying items' windows (0 when
 *     allowed; {@link WindowState#NEVER} if some cost can never fit)
 * @param waitMs how long an admitted request must wait before proceeding (shaping rules), the
 *     largest over its enforced items
 * @param items one decision per item, in request order
 * @param degraded whether the store failed and a rule's failure mode decided instead
 */
public record Decision(boolean allowed, long retryAfterMs, long waitMs, List<ItemDecision> items, boolean degraded) {

  public Decision {
    items = List.copyOf(items);
  }

  /**
   * Builds the request-level decision from its items: allowed iff every non-shadow item is; retry
   * after is the largest over denying enforced items; wait is the largest over enforced items (a
   * shadow rule reports the wait it would impose, and imposes none).
   */
  public static Decision of(List<ItemDecision> items, boolean degraded) {
    boolean allowed = true;
    long retry = 0;
    boolean never = false;
    long wait = 0;
    for (ItemDecision d : items) {
      if (!d.allowed() && !d.shadow()) {
        allowed = false;
        long r = d.retryAfterMs();
        if (r == WindowState.NEVER) {
          never = true;
        } else {
          retry = Math.max(retry, r);
        }
      }
      if (!d.shadow()) {
        wait = Math.max(wait, d.waitMs());
      }
    }
    if (!allowed) {
      return new Decision(false, never ? WindowState.NEVER : retry, 0, items, degraded);
    }
    return new Decision(true, 0, wait, items, degraded);
  }

  /** Whether some shadow rule would have denied this request. */
  public boolean shadowDenied() {
    for (ItemDecision d : items) {
      if (d.shadow() && !d.allowed()) {
        return true;
      }
    }
    return false;
  }
}
