package dev.sluice.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisFunctionAsyncCommands;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.AsyncExecutions;
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
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One Lettuce connection to a standalone server, a Sentinel-managed master or a Cluster. A single
 * connection carries every decision: Lettuce pipelines commands, so many decisions are in flight
 * at once without a pool.
 */
final class Link implements AutoCloseable {
  private final boolean clustered;
  private final RedisScriptingAsyncCommands<byte[], byte[]> scripting;
  private final RedisFunctionAsyncCommands<byte[], byte[]> functions;
  private final RedisKeyAsyncCommands<byte[], byte[]> keys;
  /** Loads a library on the server, or on every master of a Cluster. */
  private final Function<String, CompletableFuture<Void>> loader;
  private final Supplier<CompletableFuture<String>> ping;
  private final Runnable shutdown;
  /** False once the server or the user turned out to have no functions: scripts from then on. */
  private volatile boolean usesFunctions = true;
  /** The library load under way, if any: calls that find the library missing share it. */
  private final AtomicReference<CompletableFuture<Void>> loading = new AtomicReference<>();
  /**
   * Lettuce's default reconnection backoff (1, 2, 4… ms) capped at 1 s instead of 30 s: after a
   * long outage the store is used again within a second of its return, not up to 30 s later,
   * while decisions stay degraded. One attempt a second per instance costs a server nothing.
   */
  private static final Delay RECONNECT_DELAY = Delay.exponential(Duration.ZERO, Duration.ofSeconds(1), 2,
      TimeUnit.MILLISECONDS);

  /** The shortest time between two topology refreshes triggered by redirects or failed reconnections. */
  static final Duration ADAPTIVE_REFRESH_EVERY = Duration.ofSeconds(1);

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
      channel.pipeline().addFirst(
          new FlushConsolidationHandler(FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
    }
  };

  private Link(boolean clustered, RedisScriptingAsyncCommands<byte[], byte[]> scripting,
      RedisFunctionAsyncCommands<byte[], byte[]> functions, RedisKeyAsyncCommands<byte[], byte[]> keys,
      Function<String, CompletableFuture<Void>> loader, Supplier<CompletableFuture<String>> ping, Runnable shutdown) {
    this.clustered = clustered;
    this.scripting = scripting;
    this.functions = functions;
    this.keys = keys;
    this.loader = loader;
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
              // A crashed master's connection fails its reconnection attempts (a second apart at
              // most) until its replica is promoted; each may refresh the topology, but Lettuce's
              // default lets one do so only every 5 s, and the first ran at the crash: decisions
              // on that shard stayed degraded up to 5 s after the promotion. One refresh a second,
              // only while something is wrong, costs the Cluster nothing.
              .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_EVERY)
              .enablePeriodicRefresh(Duration.ofSeconds(30))
              .build())
          .build());
      try {
        StatefulRedisClusterConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE);
        c.setTimeout(commandTimeout);
        Function<String, CompletableFuture<Void>> loader = code -> {
          // Every master, so that any slot finds it; a node that joins later gets it on its first miss.
          AsyncExecutions<String> loads = c.async().upstream().commands().functionLoad(code, true);
          return CompletableFuture.allOf(loads.futures()).thenApply(v -> null);
        };
        return new Link(true, c.async(), c.async(), c.async(), loader, () -> c.async().ping().toCompletableFuture(), () -> {
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
      Function<String, CompletableFuture<Void>> loader =
          code -> c.async().functionLoad(code, true).toCompletableFuture().thenApply(name -> null);
      return new Link(false, c.async(), c.async(), c.async(), loader, () -> c.async().ping().toCompletableFuture(), () -> {
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

  <T> CompletableFuture<T> evalsha(String sha, ScriptOutputType type, byte[][] keyNames, byte[][] args) {
    return scripting.<T>evalsha(sha, type, keyNames, args).toCompletableFuture();
  }

  <T> CompletableFuture<T> eval(byte[] script, ScriptOutputType type, byte[][] keyNames, byte[][] args) {
    return scripting.<T>eval(script, type, keyNames, args).toCompletableFuture();
  }

  <T> CompletableFuture<T> fcall(String function, ScriptOutputType type, byte[][] keyNames, byte[][] args) {
    return functions.<T>fcall(function, type, keyNames, args).toCompletableFuture();
  }

  boolean usesFunctions() {
    return usesFunctions;
  }

  void useScript() {
    usesFunctions = false;
  }

  /** FUNCTION LOAD REPLACE, on every master of a Cluster. */
  CompletableFuture<Void> loadLibrary(String code) {
    try {
      return loader.apply(code);
    } catch (RuntimeException e) {
      // A Cluster whose topology is not known yet, a closed connection: a failed load, not a throw.
      return CompletableFuture.failedFuture(e);
    }
  }

  /** As {@link #loadLibrary}, but joins a load already under way instead of starting another. */
  CompletableFuture<Void> reloadLibrary(String code) {
    while (true) {
      CompletableFuture<Void> current = loading.get();
      if (current != null && !current.isDone()) {
        return current;
      }
      CompletableFuture<Void> mine = new CompletableFuture<>();
      if (loading.compareAndSet(current, mine)) {
        loadLibrary(code).whenComplete((v, e) -> {
          if (e != null) {
            mine.completeExceptionally(e);
          } else {
            mine.complete(null);
          }
        });
        return mine;
      }
    }
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
