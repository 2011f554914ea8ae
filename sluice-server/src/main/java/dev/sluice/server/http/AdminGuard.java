package dev.sluice.server.http;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Who may use the admin endpoints ({@code POST /v1/reset}, the policy endpoints of
 * {@link PolicyApi}, and every endpoint that changes state for other callers or tells who uses
 * the service): with an admin token, whoever presents it; without one, only a service bound
 * to a loopback address, where only processes of the same host reach it. Bound to any other
 * address without a token, every admin endpoint is refused with 403, so that a service exposed by
 * mistake cannot be wiped by anyone who reaches it.
 */
public final class AdminGuard {
  /** Digest of the token, or null without one: comparing digests takes the same time for any guess. */
  private final byte[] tokenDigest;
  private final String bound;
  private final boolean refused;

  private AdminGuard(byte[] tokenDigest, String bound, boolean refused) {
    this.tokenDigest = tokenDigest;
    this.bound = bound;
    this.refused = refused;
  }

  /**
   * @param token the admin token, or null (or empty) for none
   * @param bound the address the service listens on
   */
  public static AdminGuard of(String token, InetAddress bound) {
    boolean hasToken = token != null && !token.isEmpty();
    return new AdminGuard(hasToken ? digest(token) : null, bound.getHostAddress(),
        !hasToken && !bound.isLoopbackAddress());
  }

  /** True if every admin endpoint is refused: bound beyond loopback without a token. */
  public boolean refusesAll() {
    return refused;
  }

  /** True if admin endpoints need the token. */
  public boolean needsToken() {
    return tokenDigest != null;
  }

  /** What the service logs at start when {@link #refusesAll()}; it never contains a token. */
  public String warning() {
    return "listening on " + bound + ", beyond loopback, without an admin token: admin endpoints (POST /v1/reset, "
        + "/v1/limits, /v1/bans, /v1/lists, /v1/audit, /v1/top, /v1/leases) are refused with 403; set --admin-token or SLUICE_ADMIN_TOKEN to enable them";
  }

  /**
   * Lets a call to an admin endpoint through, or says why not.
   *
   * @param endpoint what the caller asked for, named in the error ({@code /v1/reset})
   * @param presented the token the caller presented ({@code Authorization: Bearer <token>}), or null
   * @throws ApiException 403 {@code admin_disabled} when {@link #refusesAll()}; 401
   *     {@code unauthorized} when a token is needed and {@code presented} is not it
   */
  void check(String endpoint, String presented) throws ApiException {
    if (refused) {
      throw new ApiException(403, "admin_disabled", endpoint + " is disabled: the service listens on " + bound
          + ", beyond loopback, without an admin token; start it with --admin-token (or SLUICE_ADMIN_TOKEN) "
          + "and send 'Authorization: Bearer <admin token>'");
    }
    if (tokenDigest != null && (presented == null || !MessageDigest.isEqual(digest(presented), tokenDigest))) {
      throw new ApiException(401, "unauthorized", endpoint + " needs 'Authorization: Bearer <admin token>'");
    }
  }

  private static byte[] digest(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }
}
