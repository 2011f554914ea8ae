package dev.sluice.internal.log;

import dev.sluice.Ticker;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Log lines of one kind at most once every {@link #INTERVAL_MICROS 10 s}: the first of a kind is
 * written when it happens, the others within the interval are counted, and the next line of that
 * kind says how many were held back. A failing store or a flood of bad requests shows in the log
 * at once and keeps showing while it lasts, without a line per request. The metrics count every
 * one.
 */
public final class ThrottledLog {
  /** The least time between two lines of one kind. */
  public static final long INTERVAL_MICROS = 10_000_000;
  /** Kinds tracked at once; kinds are few, and beyond this bound the counts start afresh. */
  static final int MAX_KINDS = 10_000;
  private static final long NEVER = Long.MIN_VALUE;
  /** {@link #admit}'s answer for the first line of a kind. */
  public static final long FIRST = -1;
  /** {@link #admit}'s answer when a line may not be written now. */
  public static final long HELD = -2;

  private static final class Slot {
    final AtomicLong lastLineAt = new AtomicLong(NEVER);
    final AtomicLong heldBack = new AtomicLong();
  }

  private final Ticker ticker;
  private final Consumer<String> out;
  private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

  /** Lines to {@code out}, on {@code ticker}'s clock. */
  public ThrottledLog(Ticker ticker, Consumer<String> out) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.out = Objects.requireNonNull(out, "out");
  }

  /** Lines to {@code out}, on the system clock. */
  public ThrottledLog(Consumer<String> out) {
    this(Ticker.system(), out);
  }

  /**
   * Writes {@code message} unless a line of {@code kind} was written less than 10 s ago, adding
   * how many lines of that kind were held back since the previous one; else counts it.
   */
  public void log(String kind, Supplier<String> message) {
    Slot s = slot(kind);
    long since = admit(s);
    if (since == HELD) {
      s.heldBack.incrementAndGet();
      return;
    }
    long held = s.heldBack.getAndSet(0);
    out.accept(held == 0 ? message.get() : message.get() + " (and " + held + " more like it in the last "
        + seconds(since) + " s, not logged)");
  }

  /**
   * Whether a line of {@code kind} may be written now, for callers that keep their own counts:
   * {@link #FIRST} for the first line, else the microseconds since the previous one, or
   * {@link #HELD} if not now. Unless held, a line must then be written: the kind's next one waits.
   */
  public long admit(String kind) {
    return admit(slot(kind));
  }

  private long admit(Slot s) {
    long now = ticker.nowMicros();
    long last = s.lastLineAt.get();
    if (last != NEVER && now - last < INTERVAL_MICROS || !s.lastLineAt.compareAndSet(last, now)) {
      return HELD;
    }
    return last == NEVER ? FIRST : now - last;
  }

  private Slot slot(String kind) {
    Slot s = slots.get(kind);
    if (s != null) {
      return s;
    }
    if (slots.size() >= MAX_KINDS) {
      slots.clear();
    }
    return slots.computeIfAbsent(kind, k -> new Slot());
  }

  /** {@code micros} as seconds with one decimal, for a line's "in the last ... s". */
  public static String seconds(long micros) {
    return String.format(Locale.ROOT, "%.1f", micros / 1e6);
  }
}
