package dev.sluice;

/**
 * An operation request's attribute is not one the limiter reads: a name that is not 1-64 letters,
 * digits and {@code _ . -}, an empty or oversize value, more attributes than
 * {@link OperationRequest#MAX_ATTRIBUTES}, or a value not of its declared type (an {@code ip}
 * attribute that is not an address literal). Nothing was consumed.
 *
 * <p>The message is {@code attribute '<name>' <problem>}; a front end that names the attribute its
 * own way puts {@link #problem()} after its own name for it.
 */
public final class InvalidAttributeException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String attribute;
  private final String problem;

  /**
   * @param attribute the attribute's name, null when the problem is the request's (too many)
   * @param problem what is wrong, as the rest of a sentence about the attribute
   */
  public InvalidAttributeException(String attribute, String problem) {
    super(attribute == null ? problem : "attribute '" + Attribute.clip(attribute) + "' " + problem);
    this.attribute = attribute;
    this.problem = problem;
  }

  /** The attribute refused, or null if the request as a whole was (too many attributes). */
  public String attribute() {
    return attribute;
  }

  public String problem() {
    return problem;
  }
}
