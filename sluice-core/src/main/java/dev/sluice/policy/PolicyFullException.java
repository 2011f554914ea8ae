package dev.sluice.policy;

/**
 * A policy (live limit, ban, list entry) was refused because the policies held have reached a
 * bound in bytes: the memory store's, or the limiter's cache of the store's policies. The
 * message names the bound and what is held. Nothing changed; the policies held keep working.
 * Removing policies (or letting bans expire) makes room. The service answers it with HTTP 507.
 */
public final class PolicyFullException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public PolicyFullException(String message) {
    super(message);
  }
}
