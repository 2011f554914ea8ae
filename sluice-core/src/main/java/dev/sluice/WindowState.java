package dev.sluice;

/**
 * One window of one item after a decision.
 *
 * @param limit the window's limit
 * @param periodMs the window's period in milliseconds
 * @param remaining whole units still available after this decision (rounded down)
 * @param retryAfterMs when this item's cost would fit in this window if no other traffic came: 0
 *     if it fits now, {@link #NEVER} if the cost is larger than the limit
 * @param resetAfterMs when this window is back to its full limit if no other traffic came
 * @param exceeded whether this window denies the item
 */
public record WindowState(long limit, long periodMs, long remaining, long retryAfterMs, long resetAfterMs,
    boolean exceeded) {

  /** {@code retryAfterMs} of a cost that can never fit: it is larger than the window's limit. */
  public static final long NEVER = -1;
}
