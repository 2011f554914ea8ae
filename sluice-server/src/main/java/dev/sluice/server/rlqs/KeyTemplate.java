package dev.sluice.server.rlqs;

import java.util.ArrayList;
import java.util.List;
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
    if (template.isEmpty()) {
      throw new IllegalArgumentException("key template must not be empty");
    }
    List<String> out = new ArrayList<>();
    StringBuilder lit = new StringBuilder();
    int n = template.length();
    for (int i = 0; i < n; i++) {
      char c = template.charAt(i);
      if (c == '{' && i + 1 < n && template.charAt(i + 1) == '{') {
        lit.append('{');
        i++;
      } else if (c == '}' && i + 1 < n && template.charAt(i + 1) == '}') {
        lit.append('}');
        i++;
      } else if (c == '}') {
        throw new IllegalArgumentException("key template '" + template + "' has a lone '}' at position " + (i + 1)
            + "; write '}}' for a literal brace");
      } else if (c == '{') {
        int close = template.indexOf('}', i + 1);
        if (close < 0) {
          throw new IllegalArgumentException("key template '" + template + "' has a '{' at position " + (i + 1)
              + " that is never closed; write '{{' for a literal brace");
        }
        String name = template.substring(i + 1, close);
        if (name.isEmpty() || name.indexOf('{') >= 0) {
          throw new IllegalArgumentException("key template '" + template + "' has an empty or malformed placeholder "
              + "at position " + (i + 1) + "; a placeholder names a value of the bucket, like {tenant}");
        }
        out.add(lit.toString());
        lit.setLength(0);
        out.add(name);
        i = close;
      } else {
        lit.append(c);
      }
    }
    out.add(lit.toString());
    return new KeyTemplate(template, out.toArray(new String[0]));
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
