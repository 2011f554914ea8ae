package dev.sluice;

/**
 * The store could not decide a request for a reason that is not an outage: it refused the
 * request or its script failed (a key under the store's prefix that holds another type, an
 * argument the store rejects, a reply that cannot be read). Failure modes do not apply — an
 * {@code open} rule must not admit what the store could not decide, since the same request will
 * fail the same way every time — so the request fails: {@link RateLimiter#acquire} and
 * {@link RateLimiter#tryAcquire} throw it, and {@link RateLimiter#acquireAsync}'s stage completes
 * exceptionally with it. Outages (timeouts, lost connections, a server loading, read-only,
 * busy or out of memory) are not reported this way: failure modes decide then.
 *
 * <p>Stores throw it (or complete their stage with it) for the errors they know to be of the
 * request; the message says what the store answered, never a password.
 */
public final class StoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }

  public StoreException(String message) {
    super(message);
  }
}
