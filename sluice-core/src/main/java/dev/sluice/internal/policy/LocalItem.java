package dev.sluice.internal.policy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Ticker;
import dev.sluice.Window;
import java.util.List;

/**
 * One item of a request as the local steps see it: its rule, key and cost, the windows it will be
 * decided under, and what they may need of the whole request. One instance serves every item of a
 * request in turn, so the local steps allocate one object per request.
 */
public final class LocalItem {
  /** {@link #startMicros()} of a request whose store call is not timed. */
  public static final long NO_START = Long.MIN_VALUE;

  private final Ticker ticker;
  private final RuleSet rules;
  private final List<Rule> requestRules;
  private final long startMicros;
  private long nowMillis = Long.MIN_VALUE;
  private Rule rule;
  private String key;
  private long cost;
  private List<Window> windows;
  private boolean shaped;
  private boolean own;

  /**
   * @param requestRules the rules of the request's distinct items, in order
   * @param startMicros when the store is to be asked; {@link #NO_START} if that is not read
   */
  public LocalItem(Ticker ticker, RuleSet rules, List<Rule> requestRules, long startMicros) {
    this.ticker = ticker;
    this.rules = rules;
    this.requestRules = requestRules;
    this.startMicros = startMicros;
  }

  /** Moves on to the next item; {@code windows} are the request's own for it, or null. */
  public LocalItem next(Rule rule, String key, long cost, List<Window> windows) {
    this.rule = rule;
    this.key = key;
    this.cost = cost;
    this.windows = windows;
    this.shaped = windows != null;
    this.own = windows != null;
    return this;
  }

  public Rule rule() {
    return rule;
  }

  public String key() {
    return key;
  }

  public long cost() {
    return cost;
  }

  /** The windows the item is decided under: those given it, else its rule's for its key. */
  public List<Window> windows() {
    if (windows == null) {
      windows = rule.windowsFor(key);
    }
    return windows;
  }

  /** Whether the item's windows were given (by the request or a step), not its rule's. */
  public boolean shaped() {
    return shaped;
  }

  /** Whether the request itself gave the item its windows (they may differ from request to request). */
  public boolean ownWindows() {
    return own;
  }

  /** Decides the item under {@code ws} instead of its rule's windows. */
  public void windows(List<Window> ws) {
    this.windows = ws;
    this.shaped = true;
  }

  /** The rules in force this request was resolved against. */
  public RuleSet ruleSet() {
    return rules;
  }

  /** The rules of the request's distinct items, in order. */
  public List<Rule> requestRules() {
    return requestRules;
  }

  /** When the store is to be asked, on the limiter's clock; {@link #NO_START} if not read. */
  public long startMicros() {
    return startMicros;
  }

  /** The limiter's clock in milliseconds, read once per request. */
  public long nowMillis() {
    if (nowMillis == Long.MIN_VALUE) {
      nowMillis = Math.floorDiv(ticker.nowMicros(), 1000L);
    }
    return nowMillis;
  }
}
