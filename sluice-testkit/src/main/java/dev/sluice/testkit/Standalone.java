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
  private final ServerProcess server;

  private Standalone(Flavor flavor, Path root, ServerProcess server) {
    this.flavor = flavor;
    this.root = root;
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
    return new Standalone(flavor, root, p);
  }

  public int port() {
    return server.port;
  }

  /** The server's process id. */
  public long pid() {
    return server.pid();
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
    server.stop();
    ServerProcess.deleteTree(root);
  }
}
