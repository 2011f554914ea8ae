/**
 * The Redis store: {@link dev.sluice.redis.RedisStore} and its builder, for Redis and Valkey,
 * standalone, Sentinel or Cluster. Its builder takes the application's Lettuce client or
 * resources, so Lettuce is part of this module's API. {@code dev.sluice.redis.internal} (the
 * redaction of passwords in URIs) is shared with the service only.
 */
@SuppressWarnings({"module", "requires-automatic", "requires-transitive-automatic"})
module dev.sluice.redis {
  requires transitive dev.sluice.core;
  requires transitive lettuce.core;
  requires io.netty.common;
  requires io.netty.transport;
  requires io.netty.handler;
  requires org.slf4j;

  exports dev.sluice.redis;
  exports dev.sluice.redis.internal to dev.sluice.server;
}
