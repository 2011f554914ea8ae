package dev.sluice;

import java.util.Objects;

/**
 * Who consumed a key: for each key of the rule, the last {@code keep} distinct values of the
 * request attribute {@code attribute} among requests that consumed it (which users stand behind
 * an IP). Recorded by the store in the decision's own call, kept as long as the key's state.
 * Only requests made through an {@linkplain Operation operation} carry attributes.
 *
 * @param keep how many distinct values are kept, 1 to 100
 * @param attribute the attribute whose values are recorded
 */
public record AuditPolicy(int keep, String attribute) {

  public static final int MAX_KEEP = 100;

  /** @throws IllegalArgumentException naming the field that is out of range */
  public AuditPolicy {
    Objects.requireNonNull(attribute, "attribute");
    if (keep < 1 || keep > MAX_KEEP) {
      throw new IllegalArgumentException("audit.keep must be between 1 and " + MAX_KEEP + ", was " + keep);
    }
    if (!Attribute.isName(attribute)) {
      throw new IllegalArgumentException("audit.attribute must be 1-64 letters, digits, _ . -, was '" + attribute + "'");
    }
  }
}
