/**
 * What the service shares with the Redis store without it being part of the API: {@link
 * dev.sluice.redis.internal.Redaction}, so that every message naming a Redis URI hides its
 * password the same way. The module exports this package to the service only.
 */
package dev.sluice.redis.internal;
