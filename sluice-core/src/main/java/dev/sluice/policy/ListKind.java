package dev.sluice.policy;

/**
 * The two access lists of a rule. An entry is a key, a key prefix followed by {@code *}, or a
 * key prefix followed by a CIDR range ({@code ip:10.0.0.0/8}, {@code ip:2001:db8::/32}), which
 * matches keys made of that prefix and an address or network inside the range (IPv4-mapped IPv6
 * addresses count as IPv4).
 */
public enum ListKind {
  /** Keys that are never limited under the rule: their items are admitted without a store call. */
  ALLOW,
  /** Keys that are always denied under the rule ({@link DenyReason#DENY_LISTED}), without a store call. */
  DENY;

  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
