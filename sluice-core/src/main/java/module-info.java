/**
 * Sluice's library: the limiter ({@code dev.sluice}) and its run-time policies
 * ({@code dev.sluice.policy}), the HTTP fields and problem bodies that explain a decision
 * ({@code dev.sluice.http}), what a store implements
 * ({@code dev.sluice.spi}), the memory store ({@code dev.sluice.memory}) and the native YAML
 * configuration ({@code dev.sluice.config}) and Envoy's configuration format
 * ({@code dev.sluice.config.envoy}). Everything else is internal: {@code dev.sluice.internal}
 * (the engine behind {@link dev.sluice.RateLimiter}) is exported to no one, {@code dev.sluice.algorithm}
 * (each algorithm's state and the reading of a stored Redis value) only to the Redis store, as is
 * {@code dev.sluice.internal.policy} (the policy layer: its tests check the store's merged denial
 * sketches with the limiter's own), {@code dev.sluice.internal.log} (log lines throttled by kind)
 * only to the Redis store and the service, {@code dev.sluice.internal.lease} (leased mode, whose usage
 * reports the service decodes to show the lease board) only to the service, and the
 * YAML tree with locations only to the service, which reads its {@code rlqs:} sections with it. {@code PublicApiTest} checks
 * that no exported signature names a type of a package that is not exported.
 */
@SuppressWarnings("module") // the service's module is not on this module's path when it compiles
module dev.sluice.core {
  requires com.fasterxml.jackson.core;
  requires com.fasterxml.jackson.dataformat.yaml;
  requires org.yaml.snakeyaml;
  requires jdk.management;

  exports dev.sluice;
  exports dev.sluice.policy;
  exports dev.sluice.spi;
  exports dev.sluice.memory;
  exports dev.sluice.config;
  exports dev.sluice.config.envoy;
  exports dev.sluice.http;
  exports dev.sluice.config.yaml to dev.sluice.server;
  exports dev.sluice.algorithm to dev.sluice.redis;
  exports dev.sluice.internal.policy to dev.sluice.redis;
  exports dev.sluice.internal.log to dev.sluice.redis, dev.sluice.server;
  exports dev.sluice.internal.lease to dev.sluice.server;
}
