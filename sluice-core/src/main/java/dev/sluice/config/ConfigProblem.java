package dev.sluice.config;

import java.util.Objects;

/**
 * An error or a lint warning about a configuration file, at a line and column (counting from
 * 1; 0 when it concerns the whole file).
 */
public record ConfigProblem(String file, int line, int column, String message) {

  public ConfigProblem {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(message, "message");
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
