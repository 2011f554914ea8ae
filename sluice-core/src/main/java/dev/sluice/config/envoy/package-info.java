/**
 * Envoy's rate limit configuration format (envoyproxy/ratelimit's YAML: a {@code domain} and
 * nested {@code descriptors}): {@link dev.sluice.config.envoy.EnvoyConfigParser} reads a file into
 * an {@link dev.sluice.config.envoy.EnvoyDomain}, whose limits are Sluice rules, and which
 * resolves a request's descriptors — lists of {@link dev.sluice.config.envoy.EnvoyEntry} — to the
 * rules and keys to decide, as Envoy's own service resolves them. Plain Java: the service adapts
 * Envoy's gRPC messages to it, and the Spring Boot starter builds descriptors from HTTP requests.
 */
package dev.sluice.config.envoy;
