package dev.sluice;

/**
 * A request named a rule that is not in force. The limiter checks every item before anything is
 * decided, so nothing was consumed. A rule can disappear between a caller's look at
 * {@link RateLimiter#rules()} and its request when the rules in force are replaced
 * ({@link RateLimiter#updateRules}): a caller that matched its request against the old rules
 * may match it again.
 */
public final class UnknownRuleException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String rule;

  /** An exception whose message is {@code unknown rule '<rule>'}. */
  public UnknownRuleException(String rule) {
    super("unknown rule '" + rule + "'");
    this.rule = rule;
  }

  /** The name the request gave, which no rule in force has. */
  public String rule() {
    return rule;
  }
}
