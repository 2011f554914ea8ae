package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Sluice process in a JVM of its own, as an operator runs it: its output goes to a log file,
 * and it is stopped with SIGTERM ({@link Process#destroy()} on Linux) like a supervisor does.
 */
final class ServeProcess implements AutoCloseable {
  private static final Pattern SERVING = Pattern.compile("serving on port (\\d+)");

  final Process process;
  final Path log;
  private int port = -1;

  private ServeProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** {@code java [jvmOptions] -cp <test classpath> mainClass args}, output to {@code log}. */
  static ServeProcess start(Path log, List<String> jvmOptions, String mainClass, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.addAll(prefix());
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
    cmd.addAll(args);
    return new ServeProcess(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start(),
        log);
  }

  /**
   * {@code sluice serve --host 127.0.0.1 --port 0 args} run from {@code workDir}, as an operator
   * starts it from a deployment's directory: relative paths in {@code args} are read from there.
   */
  static ServeProcess serveIn(Path workDir, Path log, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(prefix());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve", "--host",
        "127.0.0.1", "--port", "0"));
    cmd.addAll(List.of(args));
    return new ServeProcess(new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start(), log);
  }

  /** {@code java -jar jar args}, output to {@code log}: the shipped artifact rather than the test classpath. */
  static ServeProcess jar(Path log, Path jar, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>(prefix());
    cmd.addAll(List.of("-jar", jar.toString()));
    cmd.addAll(args);
    return new ServeProcess(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start(),
        log);
  }

  /** {@code sluice serve --host 127.0.0.1 --port 0 args}. */
  static ServeProcess serve(Path log, String... args) throws IOException {
    List<String> a = new ArrayList<>(List.of("serve", "--host", "127.0.0.1", "--port", "0"));
    a.addAll(List.of(args));
    return start(log, List.of(), Main.class.getName(), a);
  }

  /** The java binary of the JVM running the tests. */
  static List<String> prefix() {
    return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString());
  }

  /** Waits until the process says which port it serves on. */
  int awaitPort() throws Exception {
    AbstractServiceEndToEndTest.awaitWithin(Duration.ofSeconds(60), () -> {
      Matcher m = SERVING.matcher(log());
      if (m.find()) {
        port = Integer.parseInt(m.group(1));
      }
      return port > 0 || !process.isAlive();
    });
    assertThat(port).as("the process did not start:%n%s", log()).isPositive();
    return port;
  }

  int port() {
    return port;
  }

  String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "";
    }
  }

  /** Sends SIGTERM. */
  void terminate() {
    process.destroy();
  }

  /** Waits for the exit, at most {@code max}; true if it exited. */
  boolean awaitExit(Duration max) throws InterruptedException {
    return process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
