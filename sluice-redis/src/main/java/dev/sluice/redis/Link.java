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
import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.bootstrap.Bootstrap;
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
  /** The command timeout, where the client does not time commands out itself; else 0. */
  private final long ownTimeoutMillis;
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
      Function<String, CompletableFuture<Void>> loader, Supplier<CompletableFuture<String>> ping,
      long ownTimeoutMillis, Runnable shutdown) {
    this.clustered = clustered;
    this.scripting = scripting;
    this.functions = functions;
    this.keys = keys;
    this.loader = loader;
    this.ping = ping;
    this.ownTimeoutMillis = ownTimeoutMillis;
    this.shutdown = shutdown;
  }

  /**
   * Connects on a client of the store's own; a Sentinel URI connects to the current master and,
   * after a failover, to the new one. The client runs on {@code shared} resources (threads, timer,
   * event bus), which are never shut down here, or on resources of its own when null.
   */
  static Link open(Endpoint endpoint, Duration connectTimeout, Duration commandTimeout, int requestQueueSize,
      ClientResources shared) {
    SocketOptions socket = SocketOptions.builder().connectTimeout(connectTimeout).keepAlive(true).build();
    // Commands that wait longer than the timeout fail instead of piling up behind a slow server.
    TimeoutOptions timeouts = TimeoutOptions.enabled(commandTimeout);
    // Ours to shut down either way: on shared resources they hold none of the threads.
    ClientResources resources = shared == null
        ? ClientResources.builder().reconnectDelay(RECONNECT_DELAY).nettyCustomizer(CONSOLIDATE_FLUSHES).build()
        : onShared(shared);
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
      return cluster(client, commandTimeout, 0, () -> {
        client.shutdown();
        shutdown(resources);
      });
    }
    RedisClient client = RedisClient.create(resources);
    client.setOptions(ClientOptions.builder()
        .socketOptions(socket)
        .timeoutOptions(timeouts)
        .requestQueueSize(requestQueueSize)
        .build());
    return standalone(client, endpoint.uris().get(0), commandTimeout, 0, () -> {
      client.shutdown();
      shutdown(resources);
    });
  }

  /**
   * Opens a connection of the store's own on the application's client, whose options and
   * resources apply as they are; closing the link closes that connection only. Lettuce's default
   * options time commands out after the connection's timeout, set here to the command timeout; a
   * client set never to time them out gets the store's commands timed out here, since the limiter
   * counts each call until it completes.
   */
  static Link onClient(RedisClient client, RedisURI uri, Duration commandTimeout) {
    return standalone(client, uri, commandTimeout, ownTimeout(client.getOptions(), commandTimeout), () -> {});
  }

  /** {@link #onClient(RedisClient, RedisURI, Duration)} on a Cluster client, to its own seeds. */
  static Link onClient(RedisClusterClient client, Duration commandTimeout) {
    return cluster(client, commandTimeout, ownTimeout(client.getOptions(), commandTimeout), () -> {});
  }

  private static long ownTimeout(ClientOptions options, Duration commandTimeout) {
    return options.getTimeoutOptions().isTimeoutCommands() ? 0 : commandTimeout.toMillis();
  }

  /** {@code release}: what else to let go of, after the connection (or after failing to make it). */
  private static Link standalone(RedisClient client, RedisURI uri, Duration commandTimeout, long ownTimeoutMillis,
      Runnable release) {
    StatefulRedisConnection<byte[], byte[]> c;
    try {
      c = client.connect(ByteArrayCodec.INSTANCE, uri);
    } catch (RuntimeException e) {
      release.run();
      throw e;
    }
    c.setTimeout(commandTimeout);
    Function<String, CompletableFuture<Void>> loader =
        code -> c.async().functionLoad(code, true).toCompletableFuture().thenApply(name -> null);
    return new Link(false, c.async(), c.async(), c.async(), loader, () -> c.async().ping().toCompletableFuture(),
        ownTimeoutMillis, () -> {
          c.close();
          release.run();
        });
  }

  private static Link cluster(RedisClusterClient client, Duration commandTimeout, long ownTimeoutMillis,
      Runnable release) {
    StatefulRedisClusterConnection<byte[], byte[]> c;
    try {
      c = client.connect(ByteArrayCodec.INSTANCE);
    } catch (RuntimeException e) {
      release.run();
      throw e;
    }
    c.setTimeout(commandTimeout);
    Function<String, CompletableFuture<Void>> loader = code -> {
      // Every master, so that any slot finds it; a node that joins later gets it on its first miss.
      AsyncExecutions<String> loads = c.async().upstream().commands().functionLoad(code, true);
      return CompletableFuture.allOf(loads.futures()).thenApply(v -> null);
    };
    return new Link(true, c.async(), c.async(), c.async(), loader, () -> c.async().ping().toCompletableFuture(),
        ownTimeoutMillis, () -> {
          c.close();
          release.run();
        });
  }

  /**
   * Resources for the store's own client that run on {@code shared}'s threads, timer and event
   * bus, with the store's reconnection delay and flush merging on its connection. Each shared part
   * is handed to the builder, which marks it as not its own: shutting these resources down (on
   * close) stops none of them. The latency publisher stays off here; {@code shared}'s own
   * publishes what its recorder records, the store's commands included.
   */
  private static ClientResources onShared(ClientResources shared) {
    NettyCustomizer theirs = shared.nettyCustomizer();
    return ClientResources.builder()
        .eventLoopGroupProvider(shared.eventLoopGroupProvider())
        .eventExecutorGroup(shared.eventExecutorGroup())
        .timer(shared.timer())
        .eventBus(shared.eventBus())
        .commandLatencyRecorder(shared.commandLatencyRecorder())
        .commandLatencyPublisherOptions(DefaultEventPublisherOptions.disabled())
        .socketAddressResolver(shared.socketAddressResolver())
        .addressResolverGroup(shared.addressResolverGroup())
        .tracing(shared.tracing())
        .reconnectDelay(RECONNECT_DELAY)
        .nettyCustomizer(theirs == null ? CONSOLIDATE_FLUSHES : new NettyCustomizer() {
          @Override
          public void afterBootstrapInitialized(Bootstrap bootstrap) {
            theirs.afterBootstrapInitialized(bootstrap);
          }

          @Override
          public void afterChannelInitialized(Channel channel) {
            theirs.afterChannelInitialized(channel);
            CONSOLIDATE_FLUSHES.afterChannelInitialized(channel);
          }
        })
        .build();
  }

  /** As a client shuts down resources of its own: at once, waiting for its threads. */
  private static void shutdown(ClientResources resources) {
    resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
  }

  /** {@code command}, failed after the command timeout if the client would let it wait for ever. */
  private <T> CompletableFuture<T> timed(CompletableFuture<T> command) {
    // Completing Lettuce's command future is how its own command timeout ends a command: one not
    // yet written is then never written, and a late reply is dropped.
    return ownTimeoutMillis == 0 ? command : command.orTimeout(ownTimeoutMillis, TimeUnit.MILLISECONDS);
  }

  boolean clustered() {
    return clustered;
  }

  /** The Cluster hash slot of a key (computed for every topology; only a Cluster cares). */
  static int slot(byte[] key) {
    return SlotHash.getSlot(key);
  }

  <T> CompletableFuture<T> evalsha(String sha, ScriptOutputType type, byte[][] keyNames, byte[][] args) {
    return timed(scripting.<T>evalsha(sha, type, keyNames, args).toCompletableFuture());
  }

  <T> CompletableFuture<T> eval(byte[] script, ScriptOutputType type, byte[][] keyNames, byte[][] args) {
    return timed(scripting.<T>eval(script, type, keyNames, args).toCompletableFuture());
  }

  <T> CompletableFuture<T> fcall(String function, ScriptOutputType type, byte[][] keyNames, byte[][] args) {
    return timed(functions.<T>fcall(function, type, keyNames, args).toCompletableFuture());
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
      return timed(loader.apply(code));
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
    return timed(keys.del(key).toCompletableFuture());
  }

  CompletableFuture<String> ping() {
    return timed(ping.get());
  }

  @Override
  public void close() {
    shutdown.run();
  }
}
