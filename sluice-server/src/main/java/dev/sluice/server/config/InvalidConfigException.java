package dev.sluice.server.config;

/**
 * A configuration file that cannot be used. The message names the file and, where it is known,
 * the line and column ({@code limits.yaml:4:7: unknown field 'limt'}); the parts are also
 * available apart.
 */
public final class InvalidConfigException extends Exception {
  private final String file;
  private final int line;
  private final int column;
  private final String detail;

  /** An error about a whole file, or with the place already in {@code message}. */
  public InvalidConfigException(String message) {
    this(message, (Throwable) null);
  }

  public InvalidConfigException(String message, Throwable cause) {
    super(message, cause);
    this.file = null;
    this.line = 0;
    this.column = 0;
    this.detail = message;
  }

  /** An error about the whole of {@code file}. */
  public static InvalidConfigException ofFile(String file, String detail) {
    return new InvalidConfigException(file, detail);
  }

  private InvalidConfigException(String file, String detail) {
    super(file + ": " + detail);
    this.file = file;
    this.line = 0;
    this.column = 0;
    this.detail = detail;
  }

  /** An error at a line and column (counting from 1) of {@code file}. */
  public InvalidConfigException(String file, int line, int column, String detail) {
    super(file + ":" + line + ":" + column + ": " + detail);
    this.file = file;
    this.line = line;
    this.column = column;
    this.detail = detail;
  }

  /** The file, or null if the message names it. */
  public String file() {
    return file;
  }

  /** The line, from 1; 0 if unknown. */
  public int line() {
    return line;
  }

  public int column() {
    return column;
  }

  /** What is wrong, without the place. */
  public String detail() {
    return detail;
  }
}
