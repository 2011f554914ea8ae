package dev.sluice;

import dev.sluice.config.yaml.KeyTemplates;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One item of an {@link Operation}: {@code cost} units of {@code rule}, for the key its template
 * makes of the request's attributes, optionally only {@code when} an attribute is present or
 * {@code unless} it is.
 *
 * <p>A key template is literal text with {@code {name}} placeholders, each replaced by the value
 * of attribute {@code name} (for a typed attribute, its {@linkplain Attribute#keyText key text}):
 * {@code "user:{user}"}, {@code "ip:{ip}"}, {@code "all"}. {@code {{} and {@code }}} stand for
 * literal braces.
 */
public final class OperationItem {
  private final String rule;
  private final String key;
  private final String when;
  private final String unless;
  private final long cost;
  /** The template: literal text at even indexes, attribute names at odd ones. */
  private final String[] parts;

  /**
   * @param when the attribute whose presence the item needs, or null
   * @param unless the attribute whose absence the item needs, or null
   * @throws IllegalArgumentException if the template is malformed (an unclosed or lone brace, an
   *     empty or invalid placeholder name), {@code when} and {@code unless} name the same
   *     attribute, a name is invalid, or {@code cost} is negative
   */
  public OperationItem(String rule, String key, String when, String unless, long cost) {
    this.rule = Objects.requireNonNull(rule, "rule");
    this.key = Objects.requireNonNull(key, "key");
    this.when = when == null ? null : Attribute.checkName(when);
    this.unless = unless == null ? null : Attribute.checkName(unless);
    if (when != null && when.equals(unless)) {
      throw new IllegalArgumentException("when and unless both name attribute '" + when + "': the item could never "
          + "apply");
    }
    if (cost < 0) {
      throw new IllegalArgumentException("cost must be >= 0, was " + cost);
    }
    this.cost = cost;
    this.parts = parse(key);
  }

  /** {@code cost} 1, no condition. */
  public static OperationItem of(String rule, String key) {
    return new OperationItem(rule, key, null, null, 1);
  }

  /** This item only when attribute {@code attribute} is present. */
  public OperationItem when(String attribute) {
    return new OperationItem(rule, key, attribute, unless, cost);
  }

  /** This item only when attribute {@code attribute} is absent. */
  public OperationItem unless(String attribute) {
    return new OperationItem(rule, key, when, attribute, cost);
  }

  /** This item at {@code cost} units. */
  public OperationItem cost(long cost) {
    return new OperationItem(rule, key, when, unless, cost);
  }

  /**
   * The template as alternating literal text and attribute names.
   *
   * @throws IllegalArgumentException naming the place of the mistake
   */
  static String[] parse(String template) {
    return KeyTemplates.parse(template, Attribute::isName,
        "a placeholder is an attribute name, 1-64 letters, digits and _ . -");
  }

  /** The template as alternating literal text (even indexes) and attribute names (odd ones). */
  String[] parts() {
    return parts;
  }

  /** Whether this item applies to a request with {@code attributes}. */
  boolean applies(Map<String, String> attributes) {
    return (when == null || attributes.containsKey(when)) && (unless == null || !attributes.containsKey(unless));
  }

  public String rule() {
    return rule;
  }

  /** The key template, as written. */
  public String key() {
    return key;
  }

  /** The attribute whose presence this item needs, or null. */
  public String when() {
    return when;
  }

  /** The attribute whose absence this item needs, or null. */
  public String unless() {
    return unless;
  }

  public long cost() {
    return cost;
  }

  /** The attributes the key template names, in order of appearance (repeats kept). */
  public List<String> placeholders() {
    List<String> out = new ArrayList<>(parts.length / 2);
    for (int i = 1; i < parts.length; i += 2) {
      out.add(parts[i]);
    }
    return Collections.unmodifiableList(out);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof OperationItem i && i.rule.equals(rule) && i.key.equals(key) && Objects.equals(i.when, when)
        && Objects.equals(i.unless, unless) && i.cost == cost;
  }

  @Override
  public int hashCode() {
    return Objects.hash(rule, key, when, unless, cost);
  }

  @Override
  public String toString() {
    return "{rule: " + rule + ", key: \"" + key + "\"" + (when != null ? ", when: " + when : "")
        + (unless != null ? ", unless: " + unless : "") + (cost != 1 ? ", cost: " + cost : "") + "}";
  }
}
