package dev.sluice.redis;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.ResolvedItem;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the script's flat integer reports into decisions. First the time decided at (µs); then per
 * item: reason (0: allowed), wait (µs), and per window remaining, retry (µs; 0: not exceeded, -1:
 * never) and reset (µs). Rounding to milliseconds is done here, exactly as the memory store does
 * it: up.
 */
final class Replies {
  private static final DenyReason[] REASONS = {
      DenyReason.NONE, DenyReason.LIMIT_EXCEEDED, DenyReason.COST_EXCEEDS_LIMIT, DenyReason.WAIT_EXCEEDS_MAX_WAIT};

  private Replies() {}

  static List<ItemDecision> decode(List<?> flat, List<ResolvedItem> items) {
    List<ItemDecision> out = new ArrayList<>(items.size());
    int p = 1;
    for (ResolvedItem item : items) {
      DenyReason reason = REASONS[(int) num(flat, p++)];
      boolean allowed = reason == DenyReason.NONE;
      long wait = num(flat, p++);
      List<WindowState> windows = new ArrayList<>(item.windows().size());
      for (Window w : item.windows()) {
        long remaining = num(flat, p++);
        long retry = num(flat, p++);
        long reset = num(flat, p++);
        windows.add(new WindowState(w.limit(), w.periodMillis(), remaining,
            retry < 0 ? WindowState.NEVER : ceilMillis(retry), ceilMillis(reset), retry != 0));
      }
      out.add(new ItemDecision(item.rule().name(), item.key(), item.cost(), allowed, reason,
          allowed ? ceilMillis(wait) : 0, windows, item.rule().shadow()));
    }
    if (p != flat.size()) {
      throw new IllegalStateException("script reply has " + flat.size() + " numbers, expected " + p);
    }
    return out;
  }

  /** The time the script decided at, in µs since the epoch. */
  static long time(List<?> flat) {
    return num(flat, 0);
  }

  static long num(List<?> list, int i) {
    Object o = list.get(i);
    if (!(o instanceof Long)) {
      throw new IllegalStateException("script reply element " + i + " is " + o + ", expected an integer");
    }
    return (Long) o;
  }

  static long ceilMillis(long micros) {
    return micros <= 0 ? 0 : (micros + 999) / 1000;
  }
}
