package dev.sluice;

/**
 * A request named an operation that is not in force. Nothing was consumed. Operations belong to
 * the rule set, so one can disappear when the rules in force are replaced
 * ({@link RateLimiter#updateRules}).
 */
public final class UnknownOperationException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String operation;

  /** An exception whose message is {@code unknown operation '<operation>'}. */
  public UnknownOperationException(String operation) {
    super("unknown operation '" + Attribute.clip(operation) + "'");
    this.operation = operation;
  }

  /** The name the request gave, which no operation in force has. */
  public String operation() {
    return operation;
  }
}
