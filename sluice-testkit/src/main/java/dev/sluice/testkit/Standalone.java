package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** One server. */
public final class Standalone implements RedisDeployment {
  private final Flavor flavor;
  private final Path root;
  private final List<String> config;
  private volatile ServerProcess server;

  private Standalone(Flavor flavor, Path root, List<String> config, ServerProcess server) {
    this.flavor = flavor;
    this.root = root;
    this.config = config;
    this.server = server;
  }

  /** Starts a server; extra lines of redis.conf (e.g. {@code "requirepass secret"}) may be given. */
  public static Standalone start(Flavor flavor, String... config) {
    Path root;
    try {
      root = Files.createTempDirectory("sluice-" + flavor.name().toLowerCase(java.util.Locale.ROOT) + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ServerProcess p = Ports.withFreePort(port -> ServerProcess.start(flavor, root.resolve("node-" + port), port,
        List.of(config), false));
    return new Standalone(flavor, root, List.of(config), p);
  }

  public int port() {
    return server.port;
  }

  /** The server's process id. */
  public long pid() {
    return server.pid();
  }

  /** Stops the server (SIGTERM, by PID), as an outage would; {@link #restart()} brings it back. */
  public void stop() {
    ServerProcess p = server;
    p.signal("CONT");
    p.stop();
  }

  /**
   * Starts the server again on the same port and configuration, with an empty keyspace (nothing
   * is persisted), and waits until it answers.
   *
   * @throws IllegalStateException if it is running
   */
  public void restart() {
    ServerProcess p = server;
    if (p.alive()) {
      throw new IllegalStateException("the server on port " + p.port + " is running; stop() it first");
    }
    server = ServerProcess.start(flavor, p.dir, p.port, config, false);
  }

  /**
   * Freezes the server (SIGSTOP): connections stay open and accept bytes, nothing is answered, as
   * a server stalled by a long command, swapping or a VM pause. {@link #resume()} undoes it; call
   * it in a {@code finally} block.
   */
  public void pause() {
    server.signal("STOP");
  }

  /** Lets a {@link #pause() paused} server run again (SIGCONT); harmless on a running one. */
  public void resume() {
    server.signal("CONT");
  }

  @Override
  public Flavor flavor() {
    return flavor;
  }

  @Override
  public String uri() {
    return "redis://127.0.0.1:" + server.port;
  }

  @Override
  public Object command(String... args) {
    return server.call(args);
  }

  @Override
  public List<Object> commandOnAll(String... args) {
    return java.util.Collections.singletonList(server.call(args));
  }

  @Override
  public String describe() {
    return flavor + " standalone on 127.0.0.1:" + server.port;
  }

  @Override
  public void close() {
    stop();
    ServerProcess.deleteTree(root);
  }
}
