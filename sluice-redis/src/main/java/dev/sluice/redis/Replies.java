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
 * Turns the script's replies into decisions ("Reply" in {@code decide.lua}).
 *
 * <p>A decision call replies with one string (cheaper for the server to reply than an array).
 * It starts with little-endian int64s: the time decided at (µs), then each request's report. A
 * report is either numbers — per item: reason (0: allowed) and wait (µs), then per window
 * remaining, retry (µs; 0: not exceeded, -1: never) and reset (µs); for a banned item (reason 4)
 * the wait is the ban's time left and the windows' numbers are zeros — or, for a one-item request
 * its algorithm decided in one pass, a single negative number, {@code -1 - reason - 4 * length},
 * standing for the key's value as decided (the value read, for a denial; the value written, for
 * an admission), which follows the numbers, after the values of the requests before it. That
 * value is read by the algorithm's {@link ScriptAlgorithm} into the memory store's state, which
 * reports on it as it reports on its own: the server then does no counting and no
 * arithmetic on the windows, and packs one number instead of a report's (see "Script cost" in
 * {@code docs/redis-internals.md}). Rounding to milliseconds is done here, exactly as the memory
 * store does it: up.
 */
final class Replies {
  private static final DenyReason[] REASONS = {
      DenyReason.NONE, DenyReason.LIMIT_EXCEEDED, DenyReason.COST_EXCEEDS_LIMIT, DenyReason.WAIT_EXCEEDS_MAX_WAIT,
      DenyReason.BANNED};

  private static final VarHandle LITTLE_ENDIAN_LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Replies() {}

  /**
   * One request's share of a call's reply: the reply, the index of the request's first number in
   * it, and the offset and length of the key's value when the report is that value (else -1, 0).
   */
  record Report(byte[] reply, int at, int state, int stateLength) {
    /** The time the script decided at, in µs since the epoch. */
    long time() {
      return num(reply, 0);
    }
  }

  /** The numbers in a report of {@code items} when it is given as numbers, after the time. */
  static int longs(List<ResolvedItem> items) {
    int n = 0;
    for (ResolvedItem item : items) {
      n += 2 + 3 * item.windows().size();
    }
    return n;
  }

  /**
   * Cuts a decision call's reply (modes {@code d} and {@code b}) into the reports of its requests,
   * whose reports as numbers have {@code longs[r]} numbers each.
   *
   * @throws IllegalStateException if the reply is not shaped so
   */
  static Report[] split(byte[] reply, int[] longs) {
    if (reply == null || reply.length < 8) {
      throw new MalformedReplyException("script reply has " + (reply == null ? 0 : reply.length)
          + " bytes, expected a time and reports");
    }
    int[] at = new int[longs.length];
    int p = 1;
    long values = 0;
    for (int r = 0; r < longs.length; r++) {
      if (8L * (p + 1) > reply.length) {
        throw new MalformedReplyException("script reply of " + reply.length + " bytes ends in the report of request "
            + (r + 1) + " of " + longs.length);
      }
      at[r] = p;
      long tag = num(reply, p);
      if (tag < 0) {
        values += (-1 - tag) >>> 2;
        if (values > reply.length) {
          break;
        }
        p++;
      } else {
        p += longs[r];
      }
    }
    long expected = 8L * p + values;
    if (expected != reply.length) {
      throw new MalformedReplyException("script reply has " + reply.length + " bytes, expected " + expected
          + " for the reports of " + longs.length + " requests");
    }
    // The values follow the numbers, in the order of their requests.
    Report[] out = new Report[longs.length];
    int offset = 8 * p;
    for (int r = 0; r < longs.length; r++) {
      long tag = num(reply, at[r]);
      if (tag < 0) {
        int length = (int) ((-1 - tag) >>> 2);
        out[r] = new Report(reply, at[r], offset, length);
        offset += length;
      } else {
        out[r] = new Report(reply, at[r], -1, 0);
      }
    }
    return out;
  }

  /**
   * Whether the one item of {@code report} fits, from its reason alone: the windows are neither
   * read nor turned into objects, which is what a caller that wants a yes or no saves.
   */
  static boolean fits(Report report) {
    long first = num(report.reply(), report.at());
    long code = report.state() >= 0 ? (-1 - first) & 3 : first;
    if (code < 0 || code >= REASONS.length) {
      throw new MalformedReplyException("script reported reason " + code + ", unknown");
    }
    return code == 0;
  }

  /** Decisions from a report given as numbers: the time, then the items' (a Cluster reservation's). */
  static List<ItemDecision> decode(byte[] report, List<ResolvedItem> items) {
    int expected = 8 * (1 + longs(items));
    if (report.length != expected) {
      throw new MalformedReplyException("script report has " + report.length + " bytes, expected " + expected);
    }
    return decode(new Report(report, 1, -1, 0), items);
  }

  static List<ItemDecision> decode(Report report, List<ResolvedItem> items) {
    byte[] numbers = report.reply();
    if (report.state() >= 0) {
      if (items.size() != 1) {
        throw new MalformedReplyException("script reported a request of " + items.size() + " items by one value");
      }
      int code = (int) ((-1 - num(numbers, report.at())) & 3);
      return List.of(fromState(items.get(0), REASONS[code], numbers, report.state(), report.stateLength(),
          report.time()));
    }
    List<ItemDecision> out = new ArrayList<>(items.size());
    int p = report.at();
    for (ResolvedItem item : items) {
      long code = num(numbers, p++);
      if (code < 0 || code >= REASONS.length) {
        throw new MalformedReplyException("script reported reason " + code + ", unknown");
      }
      DenyReason reason = REASONS[(int) code];
      long wait = num(numbers, p++);
      if (reason == DenyReason.BANNED) {
        // A banned item was not evaluated: its windows' numbers are zeros; its wait is the ban's time left.
        p += 3 * item.windows().size();
        out.add(new ItemDecision(item.rule().name(), item.key(), item.cost(), false, reason, 0, List.of(),
            item.rule().shadow(), ceilMillis(wait)));
        continue;
      }
      List<WindowState> windows = new ArrayList<>(item.windows().size());
      for (Window w : item.windows()) {
        long remaining = num(numbers, p++);
        long retry = num(numbers, p++);
        long reset = num(numbers, p++);
        windows.add(window(w, remaining, retry, reset));
      }
      out.add(decision(item, reason, wait, windows));
    }
    return out;
  }

  private static WindowState window(Window w, long remaining, long retry, long reset) {
    return new WindowState(w.limit(), w.periodMillis(), remaining,
        retry < 0 ? WindowState.NEVER : ceilMillis(retry), ceilMillis(reset), retry != 0);
  }

  private static ItemDecision decision(ResolvedItem item, DenyReason reason, long wait, List<WindowState> windows) {
    boolean allowed = reason == DenyReason.NONE;
    return new ItemDecision(item.rule().name(), item.key(), item.cost(), allowed, reason,
        allowed ? ceilMillis(wait) : 0, windows, item.rule().shadow());
  }

  /**
   * The decision on {@code item} from its key's value as the script decided it at {@code now}: the
   * value it read (a denial) or wrote (an admission), {@code length} bytes of {@code reply} at
   * {@code from}. The algorithm's entry reads it into the numbers the memory store would report
   * on the same state at the same time, which are the script's {@code report}'s.
   */
  private static ItemDecision fromState(ResolvedItem item, DenyReason reason, byte[] reply, int from, int length,
      long now) {
    boolean allowed = reason == DenyReason.NONE;
    List<WindowState> windows;
    try {
      windows = ScriptAlgorithm.of(item.rule().algorithm()).report(item, allowed, reply, from, length, now);
    } catch (IllegalArgumentException e) {
      throw new MalformedReplyException("script reported " + e.getMessage(), e);
    }
    return decision(item, reason, 0, windows);
  }

  /** The time at the start of a report given as numbers. */
  static long time(byte[] report) {
    if (report.length < 8) {
      throw new MalformedReplyException("script report has " + report.length + " bytes, expected at least 8");
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
