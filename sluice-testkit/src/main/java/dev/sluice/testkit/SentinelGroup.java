package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** A master, one replica and three Sentinels (quorum 2) watching them as {@value #MASTER_NAME}. */
public final class SentinelGroup implements RedisDeployment {
  public static final String MASTER_NAME = "mymaster";

  private final Flavor flavor;
  private final Path root;
  private final List<ServerProcess> data;
  private final List<ServerProcess> sentinels;

  private SentinelGroup(Flavor flavor, Path root, List<ServerProcess> data, List<ServerProcess> sentinels) {
    this.flavor = flavor;
    this.root = root;
    this.data = data;
    this.sentinels = sentinels;
  }

  /** Starts the group and waits until every Sentinel sees the master, the replica and the other Sentinels. */
  public static SentinelGroup start(Flavor flavor) {
    Path root;
    try {
      root = Files.createTempDirectory("sluice-" + flavor.name().toLowerCase(java.util.Locale.ROOT) + "-sentinel-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<ServerProcess> data = new ArrayList<>();
    List<ServerProcess> sentinels = new ArrayList<>();
    SentinelGroup g = new SentinelGroup(flavor, root, data, sentinels);
    try {
      // Without a delay the replica's first sync starts at once instead of 5 s later.
      List<String> nodeConfig = List.of("repl-diskless-sync-delay 0");
      ServerProcess master = Ports.withFreePort(port -> ServerProcess.start(flavor, root.resolve("node-" + port), port,
          nodeConfig, false));
      data.add(master);
      ServerProcess replica = Ports.withFreePort(port -> ServerProcess.start(flavor, root.resolve("node-" + port), port,
          List.of("repl-diskless-sync-delay 0", "replicaof 127.0.0.1 " + master.port), false));
      data.add(replica);
      replica.await("replication link of " + replica.port, 15_000,
          () -> String.valueOf(replica.tryCall("INFO", "replication")).contains("master_link_status:up"));
      for (int i = 0; i < 3; i++) {
        sentinels.add(Ports.withFreePort(port -> ServerProcess.start(flavor, root.resolve("sentinel-" + port), port,
            List.of(
                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port + " 2",
                "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                "sentinel failover-timeout " + MASTER_NAME + " 10000",
                "sentinel parallel-syncs " + MASTER_NAME + " 1"),
            true)));
      }
      g.awaitSentinelsAgree(master.port, 30_000);
      return g;
    } catch (RuntimeException | Error e) {
      g.close();
      throw e;
    }
  }

  /** Waits until every Sentinel names {@code masterPort} as master and knows one replica and two other Sentinels. */
  private void awaitSentinelsAgree(int masterPort, long timeoutMillis) {
    for (ServerProcess s : sentinels) {
      s.await("sentinel " + s.port + " to see master " + masterPort + " with 1 replica and 2 other sentinels",
          timeoutMillis, () -> {
            Object addr = s.tryCall("SENTINEL", "get-master-addr-by-name", MASTER_NAME);
            if (!(addr instanceof List<?> l) || l.size() != 2 || !String.valueOf(masterPort).equals(l.get(1))) {
              return false;
            }
            Object info = s.tryCall("SENTINEL", "master", MASTER_NAME);
            if (!(info instanceof List<?> fields)) {
              return false;
            }
            String replicas = field(fields, "num-slaves");
            String others = field(fields, "num-other-sentinels");
            String flags = field(fields, "flags");
            return "1".equals(replicas) && "2".equals(others) && "master".equals(flags);
          });
    }
  }

  private static String field(List<?> flat, String name) {
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      if (name.equals(flat.get(i))) {
        return String.valueOf(flat.get(i + 1));
      }
    }
    return null;
  }

  /** The port of the master as the first reachable Sentinel names it. */
  public int masterPort() {
    for (ServerProcess s : sentinels) {
      Object addr = s.tryCall("SENTINEL", "get-master-addr-by-name", MASTER_NAME);
      if (addr instanceof List<?> l && l.size() == 2) {
        return Integer.parseInt(String.valueOf(l.get(1)));
      }
    }
    throw new AssertionError("no sentinel answers for " + MASTER_NAME);
  }

  private ServerProcess master() {
    int port = masterPort();
    for (ServerProcess p : data) {
      if (p.port == port) {
        return p;
      }
    }
    throw new AssertionError("sentinels name unknown master port " + port);
  }

  public List<Integer> sentinelPorts() {
    return sentinels.stream().map(p -> p.port).collect(Collectors.toList());
  }

  /**
   * A planned failover: makes the Sentinels promote the replica ({@code SENTINEL FAILOVER}) and
   * waits until the replica is master and every Sentinel names it. Returns the new master's port.
   * The former master keeps accepting commands until the Sentinels turn it into a replica,
   * several seconds later; clients connected to it are disconnected then.
   */
  public int failover() {
    int old = masterPort();
    ServerProcess next = data.stream().filter(p -> p.port != old && p.alive()).findFirst().orElseThrow();
    sentinels.get(0).call("SENTINEL", "FAILOVER", MASTER_NAME);
    awaitPromoted(next);
    return next.port;
  }

  /**
   * A crash: kills the master (SIGKILL) and waits until the Sentinels have promoted the replica.
   * Returns the new master's port. The group has no replica afterwards.
   */
  public int killMaster() {
    int old = masterPort();
    ServerProcess former = data.stream().filter(p -> p.port == old).findFirst().orElseThrow();
    ServerProcess next = data.stream().filter(p -> p.port != old && p.alive()).findFirst().orElseThrow();
    former.kill();
    awaitPromoted(next);
    return next.port;
  }

  private void awaitPromoted(ServerProcess next) {
    next.await("replica " + next.port + " to become master", 30_000,
        () -> String.valueOf(next.tryCall("INFO", "replication")).contains("role:master"));
    for (ServerProcess s : sentinels) {
      s.await("sentinel " + s.port + " to name " + next.port + " as master", 30_000, () -> {
        Object addr = s.tryCall("SENTINEL", "get-master-addr-by-name", MASTER_NAME);
        return addr instanceof List<?> l && l.size() == 2 && String.valueOf(next.port).equals(l.get(1));
      });
    }
  }

  @Override
  public Flavor flavor() {
    return flavor;
  }

  /** {@code redis-sentinel://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c#mymaster}. */
  @Override
  public String uri() {
    return "redis-sentinel://" + sentinels.stream().map(p -> "127.0.0.1:" + p.port).collect(Collectors.joining(","))
        + "#" + MASTER_NAME;
  }

  @Override
  public Object command(String... args) {
    return master().call(args);
  }

  @Override
  public List<Object> commandOnAll(String... args) {
    return java.util.Collections.singletonList(master().call(args));
  }

  @Override
  public String describe() {
    return flavor + " sentinel group: data " + data.stream().map(p -> p.port).collect(Collectors.toList())
        + ", sentinels " + sentinelPorts();
  }

  @Override
  public void close() {
    for (ServerProcess s : sentinels) {
      s.stop();
    }
    for (ServerProcess d : data) {
      d.stop();
    }
    ServerProcess.deleteTree(root);
  }
}
