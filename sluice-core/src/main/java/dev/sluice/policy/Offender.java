package dev.sluice.policy;

/**
 * A key among the most denied of a rule.
 *
 * @param denials its denials as counted by the sketch: at least the true count, at most
 *     {@code error} more
 * @param error the sketch's overestimate bound for this key
 */
public record Offender(String key, long denials, long error) {}
