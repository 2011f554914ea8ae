package dev.sluice.server.cli;

/**
 * A mistake in what the user gave the command (a bad configuration, a malformed trace, an
 * unknown store): its message is printed as is, without a stack trace.
 */
final class CliException extends RuntimeException {
  private final int exitCode;

  CliException(String message) {
    this(message, Main.EXIT_ERRORS);
  }

  CliException(String message, int exitCode) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  int exitCode() {
    return exitCode;
  }
}
