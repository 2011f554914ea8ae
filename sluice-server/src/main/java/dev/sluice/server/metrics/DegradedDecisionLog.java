package dev.sluice.server.metrics;

import dev.sluice.internal.log.ThrottledLog;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Ticker;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs degraded decisions (the store failed and failure modes decided), at most one line per rule
 * every {@link #INTERVAL_MICROS 10 s}, with the counts since that rule's previous line and the
 * latest store error: an outage shows in the log at once and keeps showing while it lasts, but a
 * busy service does not log a line per request. The first degraded decision of a rule after a
 * quiet interval is logged when it happens; counts that come after a rule's last line are logged
 * with its next degraded decision (the metrics count every one).
 */
public final class DegradedDecisionLog implements DecisionListener {
  private static final Logger LOG = LoggerFactory.getLogger(DegradedDecisionLog.class);

  /** The least time between two lines about one rule. */
  public static final long INTERVAL_MICROS = ThrottledLog.INTERVAL_MICROS;
  /** Rules tracked at once; rules are few, and beyond this bound the counts start afresh. */
  static final int MAX_RULES = 10_000;

  /** Degraded items of one rule since its last line. */
  private static final class Tally {
    final AtomicLong allowed = new AtomicLong();
    final AtomicLong denied = new AtomicLong();
  }

  private final ThrottledLog lines;
  private final Consumer<String> out;
  private final ConcurrentHashMap<String, Tally> tallies = new ConcurrentHashMap<>();
  /** The cause of the latest degraded decision: listeners hear of it just before the decision. */
  private volatile Throwable lastError;

  /** Lines at WARN on this class's logger, on the system clock. */
  public DegradedDecisionLog() {
    this(Ticker.system(), LOG::warn);
  }

  /** Lines to {@code out}, on {@code ticker}'s clock. */
  public DegradedDecisionLog(Ticker ticker, Consumer<String> out) {
    this.out = Objects.requireNonNull(out, "out");
    this.lines = new ThrottledLog(ticker, out);
  }

  @Override
  public void onStoreError(Request request, Throwable error) {
    lastError = error;
  }

  @Override
  public void onDecision(Request request, Decision d, long storeNanos) {
    if (!d.degraded()) {
      return;
    }
    if (tallies.size() >= MAX_RULES) {
      tallies.clear();
    }
    String previous = null;
    for (ItemDecision it : d.items()) {
      Tally t = tallies.computeIfAbsent(it.rule(), r -> new Tally());
      (d.allowed() ? t.allowed : t.denied).incrementAndGet();
      // Requests usually repeat one rule for several keys: one look at the clock per rule.
      if (!it.rule().equals(previous)) {
        maybeLog(it.rule(), t);
        previous = it.rule();
      }
    }
  }

  private void maybeLog(String rule, Tally t) {
    long sinceMicros = lines.admit(rule);
    if (sinceMicros == ThrottledLog.HELD) {
      return;
    }
    long allowed = t.allowed.getAndSet(0);
    long denied = t.denied.getAndSet(0);
    String since = sinceMicros == ThrottledLog.FIRST ? "" : " in the last " + ThrottledLog.seconds(sinceMicros) + " s";
    out.accept("rule '" + rule + "': " + (allowed + denied) + " degraded decision" + (allowed + denied == 1 ? "" : "s")
        + since + " (" + allowed + " allowed, " + denied + " denied), decided by its failure_mode because the store "
        + "failed: " + describe(lastError));
  }

  private static String describe(Throwable e) {
    if (e == null) {
      return "unknown error";
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }
}
