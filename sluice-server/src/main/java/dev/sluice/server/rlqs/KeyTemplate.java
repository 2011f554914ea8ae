package dev.sluice.server.rlqs;

import dev.sluice.config.yaml.KeyTemplates;
import java.util.Map;

/**
 * A key made of a bucket's values: literal text with {@code {name}} placeholders, each replaced by
 * the {@code BucketId}'s value for {@code name} ({@code "tenant:{tenant}"}, {@code "all"}).
 * {@code {{} and {@code }}} stand for literal braces, as in an operation's key template.
 */
final class KeyTemplate {
  private final String text;
  /** Literal text at even indexes, value names at odd ones. */
  private final String[] parts;

  private KeyTemplate(String text, String[] parts) {
    this.text = text;
    this.parts = parts;
  }

  /**
   * @throws IllegalArgumentException naming the place of the mistake: an empty template, an
   *     unclosed or lone brace, an empty placeholder
   */
  static KeyTemplate parse(String template) {
    return new KeyTemplate(template, KeyTemplates.parse(template, name -> !name.isEmpty() && name.indexOf('{') < 0,
        "a placeholder names a value of the bucket, like {tenant}"));
  }

  /** The key for a bucket's values, or null when one of the names it needs is not among them. */
  String expand(Map<String, String> values) {
    if (parts.length == 1) {
      return parts[0];
    }
    StringBuilder b = new StringBuilder(parts[0]);
    for (int i = 1; i < parts.length; i += 2) {
      String v = values.get(parts[i]);
      if (v == null) {
        return null;
      }
      b.append(v).append(parts[i + 1]);
    }
    return b.toString();
  }

  /** The template as written. */
  String text() {
    return text;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KeyTemplate t && t.text.equals(text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  @Override
  public String toString() {
    return text;
  }
}
