package dev.sluice.client;

/**
 * The service could not be asked, or did not decide: no instance answers, the connection failed
 * or timed out, the instance is over capacity, or its own store was out and it answered with its
 * failure modes. An outage to the limiter: each rule's {@code failure_mode} decides, on the
 * client, and the decision is marked degraded.
 */
public final class ServiceUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ServiceUnavailableException(String message) {
    super(message);
  }

  public ServiceUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
