package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/sluice}, the launcher shipped beside {@code sluice.jar}, run with {@code sh} as an
 * operator or a container runs it, on the shaded jar (so after {@code package}, like
 * {@link ShadedJarIT}).
 */
class LauncherIT {
  static final Path SCRIPT = Path.of("src/main/dist/bin/sluice");

  @TempDir
  Path dir;

  record Run(int exit, String out, String err) {}

  private static Run run(Path script, Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("sh", script.toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("JAVA_OPTS");
    pb.environment().remove("SLUICE_OPTS");
    pb.environment().remove("SLUICE_JAR");
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().putAll(env);
    Path out = Files.createTempFile("launcher", ".out");
    Path err = Files.createTempFile("launcher", ".err");
    try {
      Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the launcher ends").isTrue();
      return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  /** An installation: {@code bin/sluice} and {@code lib/sluice.jar}. */
  private Path install(Path root) throws IOException {
    Files.createDirectories(root.resolve("bin"));
    Files.createDirectories(root.resolve("lib"));
    Files.copy(SCRIPT, root.resolve("bin/sluice"));
    Files.createSymbolicLink(root.resolve("lib/sluice.jar"), ShadedJarIT.jar().toAbsolutePath());
    return root.resolve("bin/sluice");
  }

  @Test
  void versionThroughTheLauncherIsTheJarsWithJavaAndTheSystem() throws Exception {
    String version = System.getProperty("sluice.version");
    assertThat(version).as("the project's version, from the build").isNotBlank();
    try (JarFile jar = new JarFile(ShadedJarIT.jar().toFile())) {
      assertThat(jar.getManifest().getMainAttributes().getValue("Implementation-Version")).isEqualTo(version);
    }
    Run r = run(install(dir.resolve("opt")), Map.of(), "--version");
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> lines = r.out().lines().toList();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(0)).isEqualTo("sluice " + version);
    assertThat(lines.get(1)).startsWith("Java " + System.getProperty("java.version"));
    assertThat(lines.get(2)).startsWith("OS " + System.getProperty("os.name"));
  }

  @Test
  void theJarIsFoundNextToTheScriptAndThroughALinkToIt() throws Exception {
    Path flat = Files.createDirectories(dir.resolve("flat"));
    Files.copy(SCRIPT, flat.resolve("sluice"));
    Files.createSymbolicLink(flat.resolve("sluice.jar"), ShadedJarIT.jar().toAbsolutePath());
    assertThat(run(flat.resolve("sluice"), Map.of(), "--version").out()).startsWith("sluice ");

    Path script = install(dir.resolve("opt"));
    Path link = Files.createDirectories(dir.resolve("usr/local/bin")).resolve("sluice");
    Files.createSymbolicLink(link, script.toAbsolutePath());
    Run r = run(link, Map.of(), "--version");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).startsWith("sluice ");
  }

  @Test
  void theDefaultFlagsApplyAndTheUsersOptionsComeAfterThemOrReplaceThem() throws Exception {
    Path script = install(dir.resolve("opt"));
    Run defaults = run(script, Map.of("JAVA_OPTS", "-XX:+PrintCommandLineFlags"), "--version");
    assertThat(defaults.exit()).as(defaults.err()).isZero();
    assertThat(defaults.out()).contains("-XX:+ExitOnOutOfMemoryError").contains("-XX:+UseG1GC")
        .contains("sluice " + System.getProperty("sluice.version"));

    Run chosen = run(script, Map.of("JAVA_OPTS", "-XX:+PrintCommandLineFlags -XX:+UseSerialGC",
        "SLUICE_OPTS", "-Dsluice.launcher.test=1"), "--version");
    assertThat(chosen.exit()).as(chosen.err()).isZero();
    assertThat(chosen.out()).contains("-XX:+UseSerialGC").doesNotContain("-XX:+UseG1GC")
        .contains("-XX:+ExitOnOutOfMemoryError");
  }

  @Test
  void aMissingJarOrJavaIsNamed() throws Exception {
    Path bare = Files.createDirectories(dir.resolve("bare"));
    Files.copy(SCRIPT, bare.resolve("sluice"));
    Run noJar = run(bare.resolve("sluice"), Map.of(), "--version");
    assertThat(noJar.exit()).isEqualTo(127);
    assertThat(noJar.err()).contains("sluice.jar is neither in").contains("SLUICE_JAR");

    Run noJava = run(install(dir.resolve("opt")), Map.of("JAVA_HOME", dir.resolve("nojava").toString()), "--version");
    assertThat(noJava.exit()).isEqualTo(127);
    assertThat(noJava.err()).contains("JAVA_HOME is").contains("has no bin/java");
  }

  @Test
  void theScriptIsPosixShellAndExecutable() throws Exception {
    String text = Files.readString(SCRIPT, StandardCharsets.UTF_8);
    assertThat(text).startsWith("#!/bin/sh\n");
    assertThat(Files.isExecutable(SCRIPT)).isTrue();
    // dash, Debian's /bin/sh, reads it without running it.
    Process p = new ProcessBuilder("sh", "-n", SCRIPT.toString()).redirectErrorStream(true).start();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
  }
}
