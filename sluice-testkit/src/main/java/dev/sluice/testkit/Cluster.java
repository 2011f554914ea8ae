package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A Cluster of three masters (no replicas) sharing the 16384 slots in three equal ranges, built
 * with {@code CLUSTER ADDSLOTSRANGE} and {@code CLUSTER MEET}.
 */
public final class Cluster implements RedisDeployment {
  private static final int[][] RANGES = {{0, 5460}, {5461, 10922}, {10923, 16383}};

  private final Flavor flavor;
  private final Path root;
  private final List<ServerProcess> nodes;
  private final List<Integer> busPorts;

  private Cluster(Flavor flavor, Path root, List<ServerProcess> nodes, List<Integer> busPorts) {
    this.flavor = flavor;
    this.root = root;
    this.nodes = nodes;
    this.busPorts = busPorts;
  }

  /** Starts three nodes, assigns the slots, joins them and waits until every node reports {@code cluster_state:ok}. */
  public static Cluster start(Flavor flavor) {
    Path root;
    try {
      root = Files.createTempDirectory("sluice-" + flavor.name().toLowerCase(java.util.Locale.ROOT) + "-cluster-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<ServerProcess> nodes = new ArrayList<>();
    List<Integer> bus = new ArrayList<>();
    Cluster c = new Cluster(flavor, root, nodes, bus);
    try {
      for (int i = 0; i < RANGES.length; i++) {
        nodes.add(Ports.withFreePort(port -> {
          int busPort = ServerProcess.freePort();
          ServerProcess p = ServerProcess.start(flavor, root.resolve("node-" + port), port, List.of(
              "cluster-enabled yes",
              "cluster-config-file nodes.conf",
              "cluster-node-timeout 3000",
              "cluster-port " + busPort), false);
          bus.add(busPort);
          return p;
        }));
      }
      for (int i = 0; i < nodes.size(); i++) {
        nodes.get(i).call("CLUSTER", "ADDSLOTSRANGE", String.valueOf(RANGES[i][0]), String.valueOf(RANGES[i][1]));
      }
      for (int i = 1; i < nodes.size(); i++) {
        nodes.get(0).call("CLUSTER", "MEET", "127.0.0.1", String.valueOf(nodes.get(i).port), String.valueOf(bus.get(i)));
      }
      for (ServerProcess n : nodes) {
        n.await("cluster node " + n.port + " to report cluster_state:ok with 3 known nodes", 30_000, () -> {
          String info = String.valueOf(n.tryCall("CLUSTER", "INFO"));
          if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:3")
              || !info.contains("cluster_slots_ok:16384")) {
            return false;
          }
          String view = String.valueOf(n.tryCall("CLUSTER", "NODES"));
          return !view.contains("handshake") && !view.contains("fail") && !view.contains("noaddr");
        });
      }
      return c;
    } catch (RuntimeException | Error e) {
      c.close();
      throw e;
    }
  }

  public List<Integer> ports() {
    return nodes.stream().map(p -> p.port).collect(Collectors.toList());
  }

  @Override
  public Flavor flavor() {
    return flavor;
  }

  /** {@code redis-cluster://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c}. */
  @Override
  public String uri() {
    return "redis-cluster://" + nodes.stream().map(p -> "127.0.0.1:" + p.port).collect(Collectors.joining(","));
  }

  @Override
  public Object command(String... args) {
    return nodes.get(0).call(args);
  }

  /** Sends a command to the node on {@code port}. */
  public Object commandOn(int port, String... args) {
    for (ServerProcess n : nodes) {
      if (n.port == port) {
        return n.call(args);
      }
    }
    throw new IllegalArgumentException("no cluster node on port " + port + "; nodes are " + ports());
  }

  @Override
  public List<Object> commandOnAll(String... args) {
    List<Object> out = new ArrayList<>();
    for (ServerProcess n : nodes) {
      out.add(n.call(args));
    }
    return out;
  }

  @Override
  public String describe() {
    return flavor + " cluster on " + ports() + " (bus " + busPorts + ")";
  }

  @Override
  public void close() {
    for (ServerProcess n : nodes) {
      n.stop();
    }
    ServerProcess.deleteTree(root);
  }
}
