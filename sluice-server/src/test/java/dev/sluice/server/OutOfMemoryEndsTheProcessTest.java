package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SPEC §12: the process exits rather than linger after {@code OutOfMemoryError}. Each test runs a
 * Sluice process in a JVM of its own with a small heap ({@link OutOfMemoryProbe}), makes it run
 * out of memory, and expects it gone within seconds, with exit code 3 and its port released, so
 * that a supervisor restarts it.
 */
class OutOfMemoryEndsTheProcessTest {
  @TempDir
  Path dir;

  @BeforeEach
  void config() throws IOException {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config:
              - limit: 100
                period: 1m
        """);
  }

  @Test
  void serveRunningOutOfMemoryOnAnyThreadExitsAtOnceWithCode3EvenWithoutTheJvmFlag() throws Exception {
    Path trigger = dir.resolve("fill");
    try (ServeProcess p = probe(List.of("-XX:-ExitOnOutOfMemoryError"), "thread", trigger.toString())) {
      int port = p.awaitPort();
      assertThat(get(port, "/healthz")).isEqualTo(200);

      long t0 = System.nanoTime();
      Files.createFile(trigger);
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as("exited:%n%s", p.log()).isTrue();
      long exitMs = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("out of memory on a thread, -Xmx64m, no JVM flag: exited %d ms after the heap began to fill%n",
          exitMs);
      assertThat(p.process.exitValue()).as(p.log()).isEqualTo(3);
      assertThat(p.log()).contains("sluice: fatal: ").contains("exiting with code 3");
      assertThat(released(port)).as("the port is free again").isTrue();
    }
  }

  @Test
  void serveRunningOutOfMemoryOnAnEventLoopExitsAtOnceWithCode3EvenWithoutTheJvmFlag() throws Exception {
    Path trigger = dir.resolve("fill");
    try (ServeProcess p = probe(List.of("-XX:-ExitOnOutOfMemoryError"), "eventloop", trigger.toString())) {
      int port = p.awaitPort();
      long t0 = System.nanoTime();
      Files.createFile(trigger);
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as("exited:%n%s", p.log()).isTrue();
      long exitMs = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("out of memory on an event loop, -Xmx64m, no JVM flag: exited %d ms after the heap began "
          + "to fill%n", exitMs);
      assertThat(p.process.exitValue()).as(p.log()).isEqualTo(3);
      assertThat(released(port)).isTrue();
    }
  }

  @Test
  void serveRunningOutOfMemoryOnAnEventLoopExitsAtOnceWithTheJvmFlagTheReadmeRunsItWith() throws Exception {
    Path trigger = dir.resolve("fill");
    try (ServeProcess p = probe(List.of("-XX:+ExitOnOutOfMemoryError"), "eventloop", trigger.toString())) {
      int port = p.awaitPort();
      long t0 = System.nanoTime();
      Files.createFile(trigger);
      assertThat(p.awaitExit(Duration.ofSeconds(60))).as("exited:%n%s", p.log()).isTrue();
      long exitMs = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("out of memory on an event loop, -Xmx64m -XX:+ExitOnOutOfMemoryError: exited %d ms after "
          + "the heap began to fill%n", exitMs);
      assertThat(p.process.exitValue()).as(p.log()).isEqualTo(3);
      assertThat(released(port)).isTrue();
    }
  }

  @Test
  void anOutOfMemoryErrorWhileDecidingARequestEndsTheProcessWithCode3() throws Exception {
    List<String> args = List.of("store", dir.toString());
    try (ServeProcess p = ServeProcess.start(dir.resolve("serve.log"), List.of("-Xmx64m", "-XX:-ExitOnOutOfMemoryError"),
        OutOfMemoryProbe.class.getName(), args)) {
      int port = p.awaitPort();
      try (RawHttp1 c = RawHttp1.connect(port)) {
        assertThat(c.post("/v1/acquire", "{\"rule\":\"api\",\"key\":\"fine\"}").status()).isEqualTo(200);
        c.sendPost("/v1/acquire", "{\"rule\":\"api\",\"key\":\"oom\"}");
      }
      assertThat(p.awaitExit(Duration.ofSeconds(30))).as("exited:%n%s", p.log()).isTrue();
      assertThat(p.process.exitValue()).as(p.log()).isEqualTo(3);
      assertThat(p.log()).contains("sluice: fatal: java.lang.OutOfMemoryError: Java heap space");
      assertThat(released(port)).isTrue();
    }
  }

  private ServeProcess probe(List<String> jvm, String mode, String trigger) throws IOException {
    List<String> options = new ArrayList<>(List.of("-Xmx64m"));
    options.addAll(jvm);
    return ServeProcess.start(dir.resolve("serve.log"), options, OutOfMemoryProbe.class.getName(),
        List.of(mode, trigger, "serve", "--config", dir.toString(), "--port", "0"));
  }

  private static int get(int port, String path) throws IOException {
    try (RawHttp1 c = RawHttp1.connect(port)) {
      return c.get(path).status();
    }
  }

  private static boolean released(int port) {
    try (RawHttp1 c = RawHttp1.connect(port)) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }
}
