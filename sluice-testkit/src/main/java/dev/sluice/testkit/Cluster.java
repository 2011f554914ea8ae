package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * A Cluster of three masters sharing the 16384 slots in three equal ranges, built with {@code
 * CLUSTER ADDSLOTSRANGE} and {@code CLUSTER MEET}; {@link #withReplicas} gives each master a
 * replica ({@code CLUSTER REPLICATE}) that takes over when the master is killed.
 */
public final class Cluster implements RedisDeployment {
  private static final int[][] RANGES = {{0, 5460}, {5461, 10922}, {10923, 16383}};

  private final Flavor flavor;
  private final Path root;
  private final List<ServerProcess> nodes;
  private final List<Integer> busPorts;
  /** By range: the node that holds it now. */
  private final List<ServerProcess> masters = new CopyOnWriteArrayList<>();
  /** By range: its replica, or null (none, or it has been promoted). */
  private final List<ServerProcess> replicas = new CopyOnWriteArrayList<>();

  private Cluster(Flavor flavor, Path root, List<ServerProcess> nodes, List<Integer> busPorts) {
    this.flavor = flavor;
    this.root = root;
    this.nodes = nodes;
    this.busPorts = busPorts;
  }

  /** Starts three masters, assigns the slots, joins them and waits until every node reports {@code cluster_state:ok}. */
  public static Cluster start(Flavor flavor) {
    return start(flavor, false, 3000);
  }

  /**
   * Three masters with one replica each, and a node timeout of 1 s, so that a killed master's
   * replica is promoted within a few seconds ({@link #killMaster}). Waits until every replica's
   * link to its master is up.
   */
  public static Cluster withReplicas(Flavor flavor) {
    return start(flavor, true, 1000);
  }

  private static Cluster start(Flavor flavor, boolean withReplicas, int nodeTimeoutMs) {
    Path root;
    try {
      root = Files.createTempDirectory("sluice-" + flavor.name().toLowerCase(java.util.Locale.ROOT) + "-cluster-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<ServerProcess> nodes = new ArrayList<>();
    List<Integer> bus = new ArrayList<>();
    Cluster c = new Cluster(flavor, root, nodes, bus);
    int count = RANGES.length * (withReplicas ? 2 : 1);
    try {
      for (int i = 0; i < count; i++) {
        nodes.add(Ports.withFreePort(port -> {
          int busPort = ServerProcess.freePort();
          ServerProcess p = ServerProcess.start(flavor, root.resolve("node-" + port), port, List.of(
              "cluster-enabled yes",
              "cluster-config-file nodes.conf",
              "cluster-node-timeout " + nodeTimeoutMs,
              "cluster-port " + busPort,
              // A replica's first sync starts at once instead of 5 s later.
              "repl-diskless-sync-delay 0"), false);
          bus.add(busPort);
          return p;
        }));
      }
      for (int i = 0; i < RANGES.length; i++) {
        nodes.get(i).call("CLUSTER", "ADDSLOTSRANGE", String.valueOf(RANGES[i][0]), String.valueOf(RANGES[i][1]));
        c.masters.add(nodes.get(i));
        c.replicas.add(withReplicas ? nodes.get(i + RANGES.length) : null);
      }
      for (int i = 1; i < nodes.size(); i++) {
        nodes.get(0).call("CLUSTER", "MEET", "127.0.0.1", String.valueOf(nodes.get(i).port), String.valueOf(bus.get(i)));
      }
      if (withReplicas) {
        for (ServerProcess n : nodes) {
          n.await("cluster node " + n.port + " to know " + count + " nodes", 30_000, () -> {
            String info = String.valueOf(n.tryCall("CLUSTER", "INFO"));
            return info.contains("cluster_known_nodes:" + count)
                && !String.valueOf(n.tryCall("CLUSTER", "NODES")).contains("handshake");
          });
        }
        for (int i = 0; i < RANGES.length; i++) {
          String masterId = String.valueOf(c.masters.get(i).call("CLUSTER", "MYID"));
          c.replicas.get(i).call("CLUSTER", "REPLICATE", masterId);
        }
        for (ServerProcess r : c.replicas) {
          r.await("replication link of cluster replica " + r.port, 30_000,
              () -> String.valueOf(r.tryCall("INFO", "replication")).contains("master_link_status:up"));
        }
      }
      for (ServerProcess n : nodes) {
        c.awaitHealthy(n, count);
      }
      return c;
    } catch (RuntimeException | Error e) {
      c.close();
      throw e;
    }
  }

  /** Waits until {@code n} reports every slot served, {@code known} nodes, and sees no node failing or joining. */
  private void awaitHealthy(ServerProcess n, int known) {
    n.await("cluster node " + n.port + " to report cluster_state:ok with " + known + " known nodes", 30_000, () -> {
      String info = String.valueOf(n.tryCall("CLUSTER", "INFO"));
      if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + known)
          || !info.contains("cluster_slots_ok:16384")) {
        return false;
      }
      String view = String.valueOf(n.tryCall("CLUSTER", "NODES"));
      return !view.contains("handshake") && !view.contains("fail") && !view.contains("noaddr")
          && view.lines().filter(l -> l.contains("slave")).count() == replicas.stream().filter(r -> r != null).count();
    });
  }

  /** The ports of the masters, in the order of their slot ranges. */
  public List<Integer> ports() {
    return masters.stream().map(p -> p.port).collect(Collectors.toList());
  }

  /** The ports of the replicas still replicating (none without {@link #withReplicas}). */
  public List<Integer> replicaPorts() {
    return replicas.stream().filter(r -> r != null).map(p -> p.port).collect(Collectors.toList());
  }

  /** The ports of the masters that have a replica to take over from them. */
  public List<Integer> portsWithReplica() {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < masters.size(); i++) {
      if (replicas.get(i) != null) {
        out.add(masters.get(i).port);
      }
    }
    return out;
  }

  /** Sends a command to every running node, masters and replicas. */
  public List<Object> commandOnEveryNode(String... args) {
    List<Object> out = new ArrayList<>();
    for (ServerProcess n : nodes) {
      if (n.alive()) {
        out.add(n.call(args));
      }
    }
    return out;
  }

  /** The port of the master that serves {@code slot} now. */
  public int masterPortForSlot(int slot) {
    for (int i = 0; i < RANGES.length; i++) {
      if (slot >= RANGES[i][0] && slot <= RANGES[i][1]) {
        return masters.get(i).port;
      }
    }
    throw new IllegalArgumentException("slot " + slot + " is outside 0..16383");
  }

  /**
   * A crash: kills the master on {@code port} (SIGKILL) and waits until its replica has been
   * promoted and every remaining node reports {@code cluster_state:ok} again. Returns the new
   * master's port. The failed node stays in the others' tables, flagged {@code fail}.
   *
   * @throws IllegalArgumentException if no master with a replica runs on {@code port}
   */
  public int killMaster(int port) {
    int range = -1;
    for (int i = 0; i < masters.size(); i++) {
      if (masters.get(i).port == port && replicas.get(i) != null) {
        range = i;
      }
    }
    if (range < 0) {
      throw new IllegalArgumentException("no master with a replica on port " + port + "; masters " + ports()
          + ", replicas " + replicaPorts());
    }
    ServerProcess former = masters.get(range);
    ServerProcess next = replicas.get(range);
    former.kill();
    next.await("cluster replica " + next.port + " to take over from " + port, 30_000,
        () -> String.valueOf(next.tryCall("INFO", "replication")).contains("role:master"));
    masters.set(range, next);
    replicas.set(range, null);
    for (ServerProcess n : nodes) {
      if (n.alive()) {
        n.await("cluster node " + n.port + " to serve every slot again", 30_000, () -> {
          String info = String.valueOf(n.tryCall("CLUSTER", "INFO"));
          return info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384");
        });
      }
    }
    return next.port;
  }

  @Override
  public Flavor flavor() {
    return flavor;
  }

  /** {@code redis-cluster://127.0.0.1:a,127.0.0.1:b,…}: every node started, masters first. */
  @Override
  public String uri() {
    return "redis-cluster://" + nodes.stream().map(p -> "127.0.0.1:" + p.port).collect(Collectors.joining(","));
  }

  @Override
  public Object command(String... args) {
    return masters.get(0).call(args);
  }

  /** Sends a command to the node on {@code port}. */
  public Object commandOn(int port, String... args) {
    for (ServerProcess n : nodes) {
      if (n.port == port) {
        return n.call(args);
      }
    }
    throw new IllegalArgumentException("no cluster node on port " + port + "; nodes are "
        + nodes.stream().map(p -> p.port).collect(Collectors.toList()));
  }

  @Override
  public List<Object> commandOnAll(String... args) {
    List<Object> out = new ArrayList<>();
    for (ServerProcess n : masters) {
      out.add(n.call(args));
    }
    return out;
  }

  @Override
  public String describe() {
    return flavor + " cluster: masters " + ports() + (replicaPorts().isEmpty() ? "" : ", replicas " + replicaPorts())
        + " (bus " + busPorts + ")";
  }

  @Override
  public void close() {
    for (ServerProcess n : nodes) {
      n.stop();
    }
    ServerProcess.deleteTree(root);
  }
}
