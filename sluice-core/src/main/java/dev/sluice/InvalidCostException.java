package dev.sluice;

/**
 * A request item's cost is not one the limiter can decide: it is negative, or the item is
 * repeated in its request (repeated {@code (rule, key)} pairs are decided as one item) and the
 * costs of its repetitions add up to more than {@link Long#MAX_VALUE}. Nothing was consumed.
 */
public final class InvalidCostException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String rule;
  private final long cost;

  /** @param message the whole message, naming {@code cost} and {@code rule} */
  public InvalidCostException(String rule, long cost, String message) {
    super(message);
    this.rule = rule;
    this.cost = cost;
  }

  /** A negative cost: {@code cost must be >= 0, was -1 (rule 'r')}. */
  public static InvalidCostException negative(String rule, long cost) {
    return new InvalidCostException(rule, cost, "cost must be >= 0, was " + cost + " (rule '" + rule + "')");
  }

  /** The rule of the item whose cost was refused. */
  public String rule() {
    return rule;
  }

  /**
   * The cost refused: the negative cost, or for a repeated item, the cost of the repetition that
   * took the sum past {@link Long#MAX_VALUE}.
   */
  public long cost() {
    return cost;
  }
}
