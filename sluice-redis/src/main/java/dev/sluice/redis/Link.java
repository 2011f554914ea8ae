package dev.sluice.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One Lettuce connection to a standalone server, a Sentinel-managed master or a Cluster. A single
 * connection carries every decision: Lettuce pipelines commands, so many decisions are in flight
 * at once without a pool.
 */
final class Link implements AutoCloseable {
  private final boolean clustered;
  private final RedisScriptingAsyncCommands<byte[], byte[]> scripting;
  private final RedisKeyAsyncCommands<byte[], byte[]> keys;
  private final Supplier<CompletableFuture<String>> ping;
  private final Runnable shutdown;

  private Link(boolean clustered, RedisScriptingAsyncCommands<byte[], byte[]> scripting,
      RedisKeyAsyncCommands<byte[], byte[]> keys, Supplier<CompletableFuture<String>> ping, Runnable shutdown) {
    this.clustered = clustered;
    this.scripting = scripting;
    this.keys = keys;
    this.ping = ping;
    this.shutdown = shutdown;
  }

  /** Connects; a Sentinel URI connects to the current master and, after a failover, to the new one. */
  static Link open(Endpoint endpoint, Duration connectTimeout, Duration commandTimeout, int requestQueueSize) {
    SocketOptions socket = SocketOptions.builder().connectTimeout(connectTimeout).keepAlive(true).build();
    // Commands that wait longer than the timeout fail instead of piling up behind a slow server.
    TimeoutOptions timeouts = TimeoutOptions.enabled(commandTimeout);
    if (endpoint.topology() == Endpoint.Topology.CLUSTER) {
      RedisClusterClient client = RedisClusterClient.create(endpoint.uris());
      client.setOptions(ClusterClientOptions.builder()
          .socketOptions(socket)
          .timeoutOptions(timeouts)
          .requestQueueSize(requestQueueSize)
          .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
              .enableAdaptiveRefreshTrigger(ClusterTopologyRefreshOptions.RefreshTrigger.values())
              .enablePeriodicRefresh(Duration.ofSeconds(30))
              .build())
          .build());
      try {
        StatefulRedisClusterConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE);
        c.setTimeout(commandTimeout);
        return new Link(true, c.async(), c.async(), () -> c.async().ping().toCompletableFuture(), () -> {
          c.close();
          client.shutdown();
        });
      } catch (RuntimeException e) {
        client.shutdown();
        throw e;
      }
    }
    RedisURI uri = endpoint.uris().get(0);
    RedisClient client = RedisClient.create();
    client.setOptions(ClientOptions.builder()
        .socketOptions(socket)
        .timeoutOptions(timeouts)
        .requestQueueSize(requestQueueSize)
        .build());
    try {
      StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE, uri);
      c.setTimeout(commandTimeout);
      return new Link(false, c.async(), c.async(), () -> c.async().ping().toCompletableFuture(), () -> {
        c.close();
        client.shutdown();
      });
    } catch (RuntimeException e) {
      client.shutdown();
      throw e;
    }
  }

  boolean clustered() {
    return clustered;
  }

  /** The Cluster hash slot of a key (computed for every topology; only a Cluster cares). */
  static int slot(byte[] key) {
    return SlotHash.getSlot(key);
  }

  CompletableFuture<List<Object>> evalsha(String sha, byte[][] keyNames, byte[][] args) {
    return scripting.<List<Object>>evalsha(sha, ScriptOutputType.MULTI, keyNames, args).toCompletableFuture();
  }

  CompletableFuture<List<Object>> eval(byte[] script, byte[][] keyNames, byte[][] args) {
    return scripting.<List<Object>>eval(script, ScriptOutputType.MULTI, keyNames, args).toCompletableFuture();
  }

  CompletableFuture<Long> del(byte[] key) {
    return keys.del(key).toCompletableFuture();
  }

  CompletableFuture<String> ping() {
    return ping.get();
  }

  @Override
  public void close() {
    shutdown.run();
  }
}
