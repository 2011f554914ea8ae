package dev.sluice.config;

import java.util.Objects;

/**
 * An error or a lint warning about a configuration file, at a line and column (counting from
 * 1; 0 when it concerns the whole file).
 */
public record ConfigProblem(String file, int line, int column, String message) {
  /**
   * The longest message kept whole. Messages quote the values they speak of, and a value can be
   * as long as the file; the problem is logged, kept for {@code GET /v1/rules} and printed by
   * {@code check-config}, so its middle is cut, keeping what was wrong and what is expected.
   */
  public static final int MAX_MESSAGE_LENGTH = 1_000;

  public ConfigProblem {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(message, "message");
    message = shorten(message);
  }

  private static String shorten(String m) {
    if (m.length() <= MAX_MESSAGE_LENGTH) {
      return m;
    }
    int keep = MAX_MESSAGE_LENGTH / 2 - 40;
    int head = keep;
    int tail = m.length() - keep;
    // Never between the two halves of a surrogate pair.
    if (Character.isHighSurrogate(m.charAt(head - 1))) {
      head--;
    }
    if (Character.isLowSurrogate(m.charAt(tail))) {
      tail++;
    }
    return m.substring(0, head) + " [... " + (tail - head) + " characters ...] " + m.substring(tail);
  }

  public static ConfigProblem at(ConfigLocation where, String message) {
    return new ConfigProblem(where.file(), where.line(), where.column(), message);
  }

  public ConfigLocation location() {
    return new ConfigLocation(file, line, column);
  }

  /** {@code file:line:column: message}, the form compilers use, so editors can jump to it. */
  @Override
  public String toString() {
    return location() + ": " + message;
  }
}
