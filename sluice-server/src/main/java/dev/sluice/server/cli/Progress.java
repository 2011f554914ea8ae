package dev.sluice.server.cli;

import java.io.PrintWriter;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A progress display on standard error for long runs. On a terminal: one line rewritten in place
 * (carriage return, then erase to the end of the line), at most ten times a second. Elsewhere (a
 * log file, CI): a full line every {@link #LINE_INTERVAL_NANOS}, so that logs stay short.
 * The status text is built only when it is due.
 */
final class Progress {
  static final long REDRAW_INTERVAL_NANOS = 100_000_000L;
  static final long LINE_INTERVAL_NANOS = 5_000_000_000L;

  enum Mode {
    /** Nothing is shown. */
    OFF,
    /** One line, redrawn in place: for a terminal. */
    REDRAW,
    /** A line now and then: for logs. */
    LINES
  }

  private final PrintWriter err;
  private final Mode mode;
  private final LongSupplier nanoClock;
  private final boolean asked;
  private final long start;
  private long last;
  private boolean drawn;

  /** @param asked whether progress was asked for ({@code --progress}): a log then always gets a final line */
  Progress(PrintWriter err, Mode mode, boolean asked, LongSupplier nanoClock) {
    this.err = err;
    this.mode = mode;
    this.asked = asked;
    this.nanoClock = nanoClock;
    this.start = nanoClock.getAsLong();
    this.last = start;
  }

  /** The mode for {@code --progress}/{@code --no-progress} (null when neither was given). */
  static Mode mode(Boolean option, boolean errIsTerminal) {
    if (Boolean.FALSE.equals(option)) {
      return Mode.OFF;
    }
    return errIsTerminal ? Mode.REDRAW : Mode.LINES;
  }

  /** Nanoseconds since the display started. */
  long elapsedNanos() {
    return nanoClock.getAsLong() - start;
  }

  /** Shows {@code status} if the mode's interval has passed since it last showed one. */
  void update(Supplier<String> status) {
    if (mode == Mode.OFF) {
      return;
    }
    long now = nanoClock.getAsLong();
    long interval = mode == Mode.REDRAW ? REDRAW_INTERVAL_NANOS : LINE_INTERVAL_NANOS;
    if (now - last < interval) {
      return;
    }
    last = now;
    show(status.get());
  }

  /**
   * Ends the display with {@code status}. On a terminal the line is left showing the final
   * state; in a log, a final line is written if progress lines were or progress was asked for,
   * so a short run logs nothing extra by default.
   */
  void finish(String status) {
    if (mode == Mode.REDRAW) {
      show(status);
      err.print('\n');
      err.flush();
    } else if (mode == Mode.LINES && (drawn || asked)) {
      show(status);
    }
  }

  private void show(String status) {
    String line = status + " [" + clock(nanoClock.getAsLong() - start) + "]";
    if (mode == Mode.REDRAW) {
      err.print("\r" + line + "\u001b[K");
    } else {
      err.println(line);
    }
    err.flush();
    drawn = true;
  }

  /** {@code m:ss} or {@code h:mm:ss}. */
  static String clock(long nanos) {
    long s = nanos / 1_000_000_000L;
    return s >= 3600 ? String.format("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
        : String.format("%d:%02d", s / 60, s % 60);
  }
}
