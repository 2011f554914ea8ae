package dev.sluice.server.config;

/**
 * A configuration file that cannot be used. The message names the file and, where it is known,
 * the line and column ({@code limits.yaml:4:7: unknown field 'limt'}).
 */
public final class InvalidConfigException extends Exception {

  public InvalidConfigException(String message) {
    super(message);
  }

  public InvalidConfigException(String message, Throwable cause) {
    super(message, cause);
  }

  /** An error at {@code where} (as given by {@link YamlNode#where()}). */
  public static InvalidConfigException at(String where, String message) {
    return new InvalidConfigException(where + ": " + message);
  }
}
