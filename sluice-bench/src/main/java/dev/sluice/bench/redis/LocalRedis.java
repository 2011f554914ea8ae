package dev.sluice.bench.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away redis-server (or valkey-server) on a free loopback port, without persistence, for
 * one load run. Stopped by {@link #close()} and, should the JVM die first, by a shutdown hook.
 */
public final class LocalRedis implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path dir;

  private LocalRedis(Process process, int port, Path dir) {
    this.process = process;
    this.port = port;
    this.dir = dir;
  }

  /** Starts {@code binary} (e.g. {@code redis-server}) and waits until it accepts connections. */
  public static LocalRedis start(String binary) {
    for (int attempt = 0; ; attempt++) {
      int port = freePort();
      try {
        Path dir = Files.createTempDirectory("sluice-bench-redis-");
        Process p = new ProcessBuilder(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--protected-mode", "yes")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("server.log").toFile())
            .start();
        LocalRedis r = new LocalRedis(p, port, dir);
        Runtime.getRuntime().addShutdownHook(new Thread(r::close));
        if (r.awaitReady()) {
          return r;
        }
        r.close();
        if (attempt >= 3) {
          throw new IllegalStateException(binary + " did not start; see " + dir.resolve("server.log"));
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot start " + binary, e);
      }
    }
  }

  private boolean awaitReady() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline && process.isAlive()) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        return true;
      } catch (IOException notYet) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return false;
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public int port() {
    return port;
  }

  public long pid() {
    return process.pid();
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
    try (var files = Files.walk(dir)) {
      for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException ignored) {
      // a temp directory left behind is harmless
    }
  }

  static List<String> binaries() {
    return List.of("redis-server", "valkey-server");
  }
}
