package dev.sluice.config.yaml;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Key templates as configuration files write them: literal text with {@code {name}} placeholders,
 * {@code {{} and {@code }}} for literal braces. One parser for operations' keys (names of
 * attributes) and the service's quota buckets (names of a bucket's values).
 */
public final class KeyTemplates {
  private KeyTemplates() {}

  /**
   * The template as alternating literal text (even indexes) and placeholder names (odd ones).
   *
   * @param isName which placeholder names are allowed
   * @param nameRule what a placeholder must be, for the error message
   * @throws IllegalArgumentException naming the place of the mistake: an empty template, a lone or
   *     unclosed brace, a placeholder {@code isName} refuses
   */
  public static String[] parse(String template, Predicate<String> isName, String nameRule) {
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
        throw new IllegalArgumentException("key template '" + clip(template) + "' has a lone '}' at position "
            + (i + 1) + "; write '}}' for a literal brace");
      } else if (c == '{') {
        int close = template.indexOf('}', i + 1);
        if (close < 0) {
          throw new IllegalArgumentException("key template '" + clip(template) + "' has a '{' at position "
              + (i + 1) + " that is never closed; write '{{' for a literal brace");
        }
        String name = template.substring(i + 1, close);
        if (!isName.test(name)) {
          throw new IllegalArgumentException("key template '" + clip(template) + "' has placeholder '{"
              + clip(name) + "}' at position " + (i + 1) + "; " + nameRule);
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
    return out.toArray(new String[0]);
  }

  private static String clip(String s) {
    return s.length() <= 64 ? s : s.substring(0, 64) + "...";
  }
}
