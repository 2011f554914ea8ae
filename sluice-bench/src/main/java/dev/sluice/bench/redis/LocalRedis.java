package dev.sluice.bench.redis;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;

/**
 * A throw-away server of the test kit for one load run: redis-server or valkey-server on a free
 * 127.0.0.1 port, without persistence, stopped by {@link #close()} or when the JVM exits.
 */
final class LocalRedis implements AutoCloseable {
  private final Standalone server;

  private LocalRedis(Standalone server) {
    this.server = server;
  }

  /** @throws IllegalArgumentException unless {@code binary} is redis-server or valkey-server */
  static LocalRedis start(String binary) {
    Flavor flavor = switch (binary) {
      case "redis-server" -> Flavor.REDIS;
      case "valkey-server" -> Flavor.VALKEY;
      default -> throw new IllegalArgumentException("--server takes redis-server or valkey-server, was '" + binary + "'");
    };
    return new LocalRedis(Standalone.start(flavor));
  }

  int port() {
    return server.port();
  }

  long pid() {
    return server.pid();
  }

  String uri() {
    return server.uri();
  }

  @Override
  public void close() {
    server.close();
  }
}
