package dev.sluice.redis;

/**
 * A script reply that is not shaped as the client expects: a fault of the code on one side or the
 * other, never of the network, so the request fails instead of following failure modes.
 */
final class MalformedReplyException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  MalformedReplyException(String message) {
    super(message);
  }

  MalformedReplyException(String message, Throwable cause) {
    super(message, cause);
  }
}
