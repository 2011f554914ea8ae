package dev.sluice.redis;

import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.spi.ResolvedItem;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the script's reports into decisions. A report is one string of little-endian int64s (one
 * string is cheaper for the server to reply than an array of integers): first the time decided at
 * (µs); then per item: reason (0: allowed), wait (µs), and per window remaining, retry (µs; 0: not exceeded, -1:
 * never) and reset (µs). Rounding to milliseconds is done here, exactly as the memory store does
 * it: up.
 */
final class Replies {
  private static final DenyReason[] REASONS = {
      DenyReason.NONE, DenyReason.LIMIT_EXCEEDED, DenyReason.COST_EXCEEDS_LIMIT, DenyReason.WAIT_EXCEEDS_MAX_WAIT};

  private static final VarHandle LITTLE_ENDIAN_LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Replies() {}

  /** The length in bytes of the report on {@code items}. */
  static int bytes(List<ResolvedItem> items) {
    int expected = 1;
    for (ResolvedItem item : items) {
      expected += 2 + 3 * item.windows().size();
    }
    return 8 * expected;
  }

  static List<ItemDecision> decode(byte[] report, List<ResolvedItem> items) {
    int expected = bytes(items);
    if (report.length != expected) {
      throw new IllegalStateException("script report has " + report.length + " bytes, expected " + expected);
    }
    List<ItemDecision> out = new ArrayList<>(items.size());
    int p = 1;
    for (ResolvedItem item : items) {
      DenyReason reason = REASONS[(int) num(report, p++)];
      boolean allowed = reason == DenyReason.NONE;
      long wait = num(report, p++);
      List<WindowState> windows = new ArrayList<>(item.windows().size());
      for (Window w : item.windows()) {
        long remaining = num(report, p++);
        long retry = num(report, p++);
        long reset = num(report, p++);
        windows.add(new WindowState(w.limit(), w.periodMillis(), remaining,
            retry < 0 ? WindowState.NEVER : ceilMillis(retry), ceilMillis(reset), retry != 0));
      }
      out.add(new ItemDecision(item.rule().name(), item.key(), item.cost(), allowed, reason,
          allowed ? ceilMillis(wait) : 0, windows, item.rule().shadow()));
    }
    return out;
  }

  /** The time the script decided at, in µs since the epoch. */
  static long time(byte[] report) {
    if (report.length < 8) {
      throw new IllegalStateException("script report has " + report.length + " bytes, expected at least 8");
    }
    return num(report, 0);
  }

  /** The i-th int64 of a report. */
  static long num(byte[] report, int i) {
    return (long) LITTLE_ENDIAN_LONG.get(report, 8 * i);
  }

  static long ceilMillis(long micros) {
    return micros <= 0 ? 0 : (micros + 999) / 1000;
  }
}
