package dev.sluice.config.envoy;

/**
 * What a request's descriptor matched: the limit, and the key of the counter it is decided under.
 * Values matched by a wildcard or by a key-only descriptor keep their own counters, as in Envoy,
 * but for a wildcard with {@code share_threshold}: every value it matches counts in one.
 */
public record EnvoyMatch(EnvoyLimit limit, String key) {}
