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
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
  /**
   * Lettuce's default reconnection backoff (1, 2, 4… ms) capped at 1 s instead of 30 s: after a
   * long outage the store is used again within a second of its return, not up to 30 s later,
   * while decisions stay degraded. One attempt a second per instance costs a server nothing.
   */
  private static final Delay RECONNECT_DELAY = Delay.exponential(Duration.ZERO, Duration.ofSeconds(1), 2,
      TimeUnit.MILLISECONDS);

  /**
   * Many decisions are in flight on the one connection; each command is written with a flush,
   * and a flush is a system call on both sides. Flushes that come while others are pending are
   * merged into one (Netty runs it as a task after the writes queued before it), so the server
   * reads several commands per system call, as from a pipelining client. Latency is unchanged:
   * the merged flush runs in the same turn of the event loop.
   */
  private static final NettyCustomizer CONSOLIDATE_FLUSHES = new NettyCustomizer() {
    @Override
    public void afterChannelInitialized(Channel channel) {
      channel.pipeline().addFirst(new FlushConsolidationHandler(FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
    }
  };

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
    ClientResources resources = ClientResources.builder().reconnectDelay(RECONNECT_DELAY)
        .nettyCustomizer(CONSOLIDATE_FLUSHES).build();
    if (endpoint.topology() == Endpoint.Topology.CLUSTER) {
      RedisClusterClient client = RedisClusterClient.create(resources, endpoint.uris());
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
          shutdown(resources);
        });
      } catch (RuntimeException e) {
        client.shutdown();
        shutdown(resources);
        throw e;
      }
    }
    RedisURI uri = endpoint.uris().get(0);
    RedisClient client = RedisClient.create(resources);
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
        shutdown(resources);
      });
    } catch (RuntimeException e) {
      client.shutdown();
      shutdown(resources);
      throw e;
    }
  }

  /** As a client shuts down resources of its own: at once, waiting for its threads. */
  private static void shutdown(ClientResources resources) {
    resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
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
