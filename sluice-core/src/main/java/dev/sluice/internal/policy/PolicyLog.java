package dev.sluice.internal.policy;

import dev.sluice.DecisionListener;
import dev.sluice.internal.log.ThrottledLog;
import dev.sluice.Ticker;
import java.util.function.Supplier;

/**
 * The warnings of the policy path that requests can cause — an automatic ban whose record could
 * not be written, a record left out of the limiter's cache — at most one line per kind every
 * {@value #INTERVAL_MICROS} µs on the limiter's clock, the next line of a kind saying how many
 * were held back; each one counted through {@link DecisionListener#onPolicyWarning}. A flood of
 * bans past the store's record cap thus writes a few lines, not one per key. Lines name rules,
 * never keys: keys are the callers' identities (see {@code docs/service.md}), and a line quoting
 * a 512-byte key per ban wrote megabytes.
 */
public final class PolicyLog {
  static final long INTERVAL_MICROS = ThrottledLog.INTERVAL_MICROS;
  /** Kinds of warning, as {@link DecisionListener#onPolicyWarning} names them. */
  static final String BAN_NOT_RECORDED = "ban_not_recorded";
  static final String CACHE_FULL = "cache_full";
  static final String RECORD_UNREADABLE = "record_unreadable";
  static final String READ_FAILED = "read_failed";

  private static final System.Logger LOG = System.getLogger(PolicyCache.class.getName());

  private final Ticker ticker;
  private final DecisionListener[] listeners;
  private final ThrottledLog lines;

  public PolicyLog(Ticker ticker, DecisionListener[] listeners) {
    this.ticker = ticker;
    this.listeners = listeners;
    this.lines = new ThrottledLog(ticker, line -> LOG.log(System.Logger.Level.WARNING, line));
  }

  /** A log without listeners, on the system clock. */
  static PolicyLog quiet() {
    return new PolicyLog(Ticker.system(), new DecisionListener[0]);
  }

  /**
   * A warning of {@code kind}: counted, and written unless a line of its kind was written less
   * than 10 s ago. {@code message} must not hold a key.
   */
  void warn(String kind, Supplier<String> message) {
    for (DecisionListener l : listeners) {
      try {
        l.onPolicyWarning(kind);
      } catch (RuntimeException ignored) {
        // A listener must not change what the limiter does.
      }
    }
    lines.log(kind, message);
  }

  /** Now on the limiter's clock, epoch milliseconds. */
  long nowMillis() {
    return Math.floorDiv(ticker.nowMicros(), 1000L);
  }

  /** An automatic ban's record could not be written: the ban holds in decisions, not in listings. */
  void banNotRecorded(String rule, String key, Throwable error) {
    warn(BAN_NOT_RECORDED, () -> "recording an automatic ban under rule '" + rule + "' failed (the ban holds in "
        + "decisions; listings lack it): " + withoutKey(describe(error), key));
  }

  /** The message of the failure under a stage's wrappers, or its class when it has none. */
  static String describe(Throwable error) {
    Throwable c = error;
    while ((c instanceof java.util.concurrent.CompletionException
        || c instanceof java.util.concurrent.ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    return c.getMessage() != null ? c.getMessage() : c.getClass().getSimpleName();
  }

  /** Records lost when the store's policies were reset: one line, at once, and counted by kind. */
  void lost(long fromVersion, long toVersion, long limits, long bans, long entries) {
    LOG.log(System.Logger.Level.WARNING, "the store's policies were reset (their version went back from " + fromVersion
        + " to " + toVersion + ": the store restarted empty or was flushed); this instance held " + limits
        + " live limit(s), " + bans + " ban(s) and " + entries + " list entry(ies) that the store no longer has:"
        + " they no longer apply, on any instance");
    for (DecisionListener l : listeners) {
      try {
        if (limits > 0) {
          l.onPolicyRecordsLost("limit", limits);
        }
        if (bans > 0) {
          l.onPolicyRecordsLost("ban", bans);
        }
        if (entries > 0) {
          l.onPolicyRecordsLost("list_entry", entries);
        }
      } catch (RuntimeException ignored) {
        // A listener must not change what the limiter does.
      }
    }
  }

  /** {@code text} with every occurrence of {@code key} replaced: a store's error may quote its arguments. */
  static String withoutKey(String text, String key) {
    return key == null || key.isEmpty() ? text : text.replace(key, "<key>");
  }
}
