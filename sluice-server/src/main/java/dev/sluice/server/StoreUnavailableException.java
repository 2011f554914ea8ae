package dev.sluice.server;

/** No server of the store named on the command line could be reached. The message has no password. */
public final class StoreUnavailableException extends RuntimeException {
  public StoreUnavailableException(String message) {
    super(message, null, false, false);
  }
}
