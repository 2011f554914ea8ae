package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One redis-server / valkey-server process (data node or sentinel) on a loopback port, in its own
 * directory, with its output in {@code server.log} there. Every started process is also stopped
 * when the JVM exits, so an aborted test run leaves no server behind.
 */
final class ServerProcess {
  private static final Set<ServerProcess> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (ServerProcess p : LIVE) {
        p.stop();
      }
    }, "sluice-testkit-stop-servers"));
  }

  final Flavor flavor;
  final int port;
  final Path dir;
  private final Process process;

  private ServerProcess(Flavor flavor, int port, Path dir, Process process) {
    this.flavor = flavor;
    this.port = port;
    this.dir = dir;
    this.process = process;
  }

  /**
   * Starts a server on {@code port} with {@code config} (lines of redis.conf) in {@code dir} and
   * waits until it answers PING. Fails with the server's log when it does not come up.
   */
  static ServerProcess start(Flavor flavor, Path dir, int port, List<String> config, boolean sentinel) {
    Path binary = flavor.binary();
    try {
      Files.createDirectories(dir);
      List<String> lines = new ArrayList<>();
      lines.add("port " + port);
      lines.add("bind 127.0.0.1");
      lines.add("protected-mode no");
      lines.add("daemonize no");
      lines.add("dir " + dir.toAbsolutePath());
      if (!sentinel) {
        lines.add("save \"\"");
        lines.add("appendonly no");
      }
      lines.addAll(config);
      Path conf = dir.resolve(sentinel ? "sentinel.conf" : "redis.conf");
      Files.write(conf, lines, StandardCharsets.UTF_8);
      List<String> cmd = new ArrayList<>(List.of(binary.toString(), conf.toAbsolutePath().toString()));
      if (sentinel) {
        cmd.add("--sentinel");
      }
      Process p = new ProcessBuilder(cmd)
          .directory(dir.toFile())
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("server.log").toFile())
          .start();
      ServerProcess sp = new ServerProcess(flavor, port, dir, p);
      LIVE.add(sp);
      sp.await("PING on port " + port, 15_000, () -> {
        if (!p.isAlive()) {
          throw new AssertionError(flavor.binaryName() + " exited with " + p.exitValue() + " on port " + port
              + "\n" + sp.logTail());
        }
        return sp.answers();
      });
      return sp;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + binary, e);
    }
  }

  /** Whether the server answers: PONG, or a refusal to an unauthenticated client (ACL configured). */
  boolean answers() {
    try {
      return "PONG".equals(Resp.call(port, "PING"));
    } catch (Resp.ErrorReply e) {
      return e.getMessage().startsWith("NOAUTH") || e.getMessage().startsWith("NOPERM");
    } catch (IOException e) {
      return false;
    }
  }

  long pid() {
    return process.pid();
  }

  boolean alive() {
    return process.isAlive();
  }

  Object call(String... args) {
    try {
      return Resp.call(port, args);
    } catch (IOException e) {
      throw new UncheckedIOException("port " + port + ": " + String.join(" ", args), e);
    }
  }

  /** The reply, or null when the server is unreachable or answers with an error. */
  Object tryCall(String... args) {
    try {
      return Resp.call(port, args);
    } catch (IOException | Resp.ErrorReply e) {
      return null;
    }
  }

  /** Polls {@code ready} until it holds; fails naming {@code what} and showing the log after the timeout. */
  void await(String what, long timeoutMillis, BooleanSupplier ready) {
    awaitCondition(what, timeoutMillis, ready, this::logTail);
  }

  static void awaitCondition(String what, long timeoutMillis, BooleanSupplier ready,
      java.util.function.Supplier<String> diagnostics) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (!ready.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeoutMillis + " ms waiting for " + what + "\n"
            + diagnostics.get());
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what, e);
      }
    }
  }

  String logTail() {
    try {
      List<String> lines = Files.readAllLines(dir.resolve("server.log"), StandardCharsets.UTF_8);
      return "--- " + dir.resolve("server.log") + " (last lines) ---\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Stops the process by its PID: SIGTERM, then SIGKILL if it has not exited after 5 s. */
  void stop() {
    LIVE.remove(this);
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  /**
   * Sends {@code SIG<name>} (e.g. {@code STOP}, {@code CONT}) to the process with {@code kill};
   * nothing when it has exited.
   */
  void signal(String name) {
    if (!process.isAlive()) {
      return;
    }
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).redirectErrorStream(true)
          .start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0 && process.isAlive()) {
        throw new AssertionError("kill -" + name + " " + process.pid() + " failed: "
            + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill -" + name, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted sending SIG" + name, e);
    }
  }

  /** Kills the process at once (SIGKILL), as a crash would. */
  void kill() {
    LIVE.remove(this);
    process.destroyForcibly();
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A free port on 127.0.0.1 at the time of the call. */
  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port", e);
    }
  }

  static void deleteTree(Path root) {
    if (root == null || !Files.exists(root)) {
      return;
    }
    try (var walk = Files.walk(root)) {
      walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // A leftover file in a temp directory is harmless.
        }
      });
    } catch (IOException ignored) {
      // Same.
    }
  }
}
