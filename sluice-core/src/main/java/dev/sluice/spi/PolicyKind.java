package dev.sluice.spi;

/** The kinds of {@link PolicyRecord}. */
public enum PolicyKind {
  /** A live limit of one (rule, key). */
  LIMIT,
  /** A ban of one (rule, key), manual or automatic (its value says which). */
  BAN,
  /** An allow-list entry of a rule. */
  ALLOW,
  /** A deny-list entry of a rule. */
  DENY
}
