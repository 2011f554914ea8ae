package dev.sluice;

/**
 * An operation request lacks an attribute that one of its items needs: the item's key template
 * names it, and the item has no {@code when} that would leave it out. Nothing was consumed.
 */
public final class MissingAttributeException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String operation;
  private final String rule;
  private final String attribute;

  /**
   * @param rule the rule of the item that needs the attribute, or null when no single item does
   *     (the attributes given leave every item of the operation out)
   */
  public MissingAttributeException(String operation, String rule, String attribute, String message) {
    super(message);
    this.operation = operation;
    this.rule = rule;
    this.attribute = attribute;
  }

  /** {@code operation 'o' needs attribute 'a' (for the key of rule 'r')}. */
  static MissingAttributeException forItem(String operation, String rule, String attribute) {
    return new MissingAttributeException(operation, rule, attribute, "operation '" + operation + "' needs attribute '"
        + attribute + "' (for the key of rule '" + rule + "')");
  }

  public String operation() {
    return operation;
  }

  /** The rule of the item whose key needs the attribute; null if the request selected no item. */
  public String rule() {
    return rule;
  }

  /** The attribute missing. */
  public String attribute() {
    return attribute;
  }
}
