package dev.sluice.server.cli;

import dev.sluice.redis.internal.Redaction;
import dev.sluice.server.StoreFactory;
import dev.sluice.server.StoreUnavailableException;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The masters of a Redis deployment, each with its own connection: a Cluster's keys are scanned
 * node by node (SCAN on a Cluster node sees that node's keys only), and each key's commands go to
 * the node that returned it. Standalone and Sentinel have one master; replicas are never used.
 */
final class Keyspace implements AutoCloseable {
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

  /** One master: its {@code host:port} and its connection. */
  record Node(String name, StatefulRedisConnection<byte[], byte[]> connection) {
    RedisAsyncCommands<byte[], byte[]> commands() {
      return connection.async();
    }

    /**
     * Runs {@code issue}, which sends commands without waiting for them, and writes them to the
     * socket together: a batch of thousands of commands is then a few writes, not one each.
     */
    void pipeline(Runnable issue) {
      connection.setAutoFlushCommands(false);
      try {
        issue.run();
      } finally {
        connection.flushCommands();
        connection.setAutoFlushCommands(true);
      }
    }
  }

  private final String description;
  private final List<Node> nodes;
  private final Runnable shutdown;

  private Keyspace(String description, List<Node> nodes, Runnable shutdown) {
    this.description = description;
    this.nodes = nodes;
    this.shutdown = shutdown;
  }

  /**
   * Connects to every master named or discovered from {@code uri}.
   *
   * @throws IllegalArgumentException if {@code uri} is not a Redis URI; no password in the message
   * @throws StoreUnavailableException if no server can be reached; no password in the message
   */
  static Keyspace connect(String uri) {
    if (!StoreFactory.isRedis(uri)) {
      throw new IllegalArgumentException("'" + Redaction.uri(uri) + "' is not a Redis URI; expected "
          + "redis://[user:password@]host[:port][/db], rediss://…, redis-sentinel://h1:p1,h2:p2[/db]#master or "
          + "redis-cluster://h1:p1,h2:p2");
    }
    int colon = uri.indexOf("://");
    String scheme = uri.substring(0, colon).toLowerCase(Locale.ROOT);
    String rest = uri.substring(colon + 3);
    SocketOptions socket = SocketOptions.builder().connectTimeout(CONNECT_TIMEOUT).build();
    TimeoutOptions timeouts = TimeoutOptions.enabled(COMMAND_TIMEOUT);
    try {
      if (scheme.endsWith("-cluster")) {
        return cluster(uri, (scheme.startsWith("rediss") ? "rediss://" : "redis://"), rest, socket, timeouts);
      }
      if (scheme.endsWith("-sentinel") && (rest.indexOf('#') < 0 || rest.endsWith("#"))) {
        throw new IllegalArgumentException("Sentinel URI '" + Redaction.uri(uri) + "' names no master: add "
            + "#<master name>, e.g. redis-sentinel://h1:26379,h2:26379#mymaster");
      }
      RedisURI target = parse(scheme + "://" + rest, uri);
      RedisClient client = RedisClient.create();
      client.setOptions(ClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts).build());
      try {
        StatefulRedisConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE, target);
        String name = scheme.endsWith("-sentinel") ? "master " + target.getSentinelMasterId()
            : target.getHost() + ":" + target.getPort();
        return new Keyspace(Redaction.uri(uri), List.of(new Node(name, c)), () -> {
          c.close();
          client.shutdown();
        });
      } catch (RuntimeException e) {
        client.shutdown();
        throw e;
      }
    } catch (RedisException e) {
      throw new StoreUnavailableException("cannot connect to " + Redaction.uri(uri) + ": "
          + StoreFactory.reason(e, uri));
    }
  }

  /** Each seed host becomes its own URI sharing the user info, path and query. */
  private static Keyspace cluster(String uri, String base, String rest, SocketOptions socket, TimeoutOptions timeouts) {
    int end = indexOfAny(rest, "/?#");
    String authority = end < 0 ? rest : rest.substring(0, end);
    String tail = end < 0 ? "" : rest.substring(end);
    int at = authority.lastIndexOf('@');
    String userInfo = authority.substring(0, at + 1);
    List<RedisURI> seeds = new ArrayList<>();
    for (String host : authority.substring(at + 1).split(",", -1)) {
      if (host.isBlank()) {
        throw new IllegalArgumentException("empty host in cluster URI '" + Redaction.uri(uri) + "'");
      }
      seeds.add(parse(base + userInfo + host.trim() + tail, uri));
    }
    RedisClusterClient client = RedisClusterClient.create(seeds);
    client.setOptions(ClusterClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts).build());
    try {
      StatefulRedisClusterConnection<byte[], byte[]> c = client.connect(ByteArrayCodec.INSTANCE);
      List<RedisClusterNode> masters = new ArrayList<>();
      for (RedisClusterNode n : c.getPartitions()) {
        if (n.getRole().isUpstream() && !n.is(RedisClusterNode.NodeFlag.FAIL)
            && !n.is(RedisClusterNode.NodeFlag.NOADDR) && !n.getSlots().isEmpty()) {
          masters.add(n);
        }
      }
      masters.sort(Comparator.comparing((RedisClusterNode n) -> n.getUri().getHost())
          .thenComparingInt(n -> n.getUri().getPort()));
      List<Node> nodes = new ArrayList<>();
      for (RedisClusterNode n : masters) {
        nodes.add(new Node(n.getUri().getHost() + ":" + n.getUri().getPort(),
            c.getConnection(n.getNodeId())));
      }
      if (nodes.isEmpty()) {
        throw new StoreUnavailableException("the cluster at " + Redaction.uri(uri) + " reports no master "
            + "serving slots");
      }
      return new Keyspace(Redaction.uri(uri), List.copyOf(nodes), () -> {
        c.close();
        client.shutdown();
      });
    } catch (RuntimeException e) {
      client.shutdown();
      throw e;
    }
  }

  private static RedisURI parse(String text, String original) {
    try {
      return RedisURI.create(text);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("cannot parse Redis URI '" + Redaction.uri(original) + "': "
          + StoreFactory.reason(e, original));
    }
  }

  private static int indexOfAny(String s, String chars) {
    for (int i = 0; i < s.length(); i++) {
      if (chars.indexOf(s.charAt(i)) >= 0) {
        return i;
      }
    }
    return -1;
  }

  /** The URI as given, without its password. */
  String description() {
    return description;
  }

  List<Node> nodes() {
    return nodes;
  }

  @Override
  public void close() {
    shutdown.run();
  }
}
