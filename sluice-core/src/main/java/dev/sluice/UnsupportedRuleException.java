package dev.sluice;

/**
 * A rule that the store cannot decide, refused when the rule is given to the store: when the
 * limiter is built and when the rules in force are replaced ({@link RateLimiter#updateRules}),
 * never later at decision time. The message names the rule, the window (or override) and the
 * store's maximum.
 */
public final class UnsupportedRuleException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String rule;

  /** @param message the whole message, naming {@code rule} */
  public UnsupportedRuleException(String rule, String message) {
    super(message);
    this.rule = rule;
  }

  /**
   * A refused window: {@code rule 'r', override 'premium:*': window 20000000 per 1h: <problem>}
   * ({@code override} null: one of the rule's own windows).
   */
  public static UnsupportedRuleException window(Rule rule, KeyOverride override, Window window, String problem) {
    return new UnsupportedRuleException(rule.name(), where(rule, override) + ": window " + window.limit() + " per "
        + window.periodText() + ": " + problem);
  }

  /** {@code rule 'r'}, or {@code rule 'r', override 'a', 'b*'}. */
  public static String where(Rule rule, KeyOverride override) {
    StringBuilder b = new StringBuilder("rule '").append(rule.name()).append('\'');
    if (override != null) {
      b.append(", override ");
      for (int i = 0; i < override.keys().size(); i++) {
        b.append(i == 0 ? "" : ", ").append('\'').append(override.keys().get(i)).append('\'');
      }
    }
    return b.toString();
  }


  /** The name of the rule refused. */
  public String rule() {
    return rule;
  }
}
