package dev.sluice.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The messages of WARNING and above that one logger of the core (which logs through
 * {@code System.Logger}, so through java.util.logging on the class path) writes while attached.
 */
public final class WarningLines extends Handler implements AutoCloseable {
  private final Logger logger;
  private final List<String> lines = new CopyOnWriteArrayList<>();

  private WarningLines(String loggerName) {
    this.logger = Logger.getLogger(loggerName);
  }

  /** Starts collecting the warnings of the logger named {@code loggerName} (a class's name). */
  public static WarningLines of(String loggerName) {
    WarningLines w = new WarningLines(loggerName);
    w.logger.addHandler(w);
    return w;
  }

  /** The messages collected so far, oldest first; a live view. */
  public List<String> lines() {
    return lines;
  }

  @Override
  public void publish(LogRecord r) {
    if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
      lines.add(r.getMessage());
    }
  }

  @Override
  public void flush() {}

  /** Stops collecting. */
  @Override
  public void close() {
    logger.removeHandler(this);
  }
}
