package dev.sluice.spring;

/**
 * Sluice is configured in a way that cannot work: the application must not start. The message
 * says what is wrong and where ({@code sluice.web.routes[0].operation}, a method, a file and
 * line), and {@link #action} what to change.
 */
public final class SluiceConfigurationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String action;

  public SluiceConfigurationException(String message, String action) {
    super(message);
    this.action = action;
  }

  public SluiceConfigurationException(String message, String action, Throwable cause) {
    super(message, cause);
    this.action = action;
  }

  /** What to change so that the application starts. */
  public String action() {
    return action;
  }
}
