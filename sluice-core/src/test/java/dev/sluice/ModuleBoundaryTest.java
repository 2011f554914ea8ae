package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The module system keeps Sluice's internals to Sluice: a program written as a module that
 * requires {@code dev.sluice.core} compiles against the API and is refused the rest. Each case
 * compiles a small consumer module with javac against the compiled module and its dependencies
 * on the module path, as a user's build would.
 */
class ModuleBoundaryTest {
  @TempDir Path dir;

  private static Path locationOf(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** javac's output for the consumer module {@code app} with one class of {@code body}. */
  private String compile(String imports, String body) throws IOException {
    Path src = dir.resolve("src");
    Files.createDirectories(src.resolve("app"));
    Files.writeString(src.resolve("module-info.java"), "module app { requires dev.sluice.core; }\n");
    Files.writeString(src.resolve("app/App.java"), "package app;\n" + imports + "\npublic class App {\n" + body + "\n}\n");
    // The core module and what it requires: Jackson's YAML reader (which requires databind, and
    // that the annotations) and SnakeYAML.
    String modulePath = Stream.of(Sluice.class, JsonFactory.class, YAMLFactory.class, ObjectMapper.class,
            JsonProperty.class, Yaml.class)
        .map(ModuleBoundaryTest::locationOf).map(Path::toString).distinct()
        .collect(Collectors.joining(java.io.File.pathSeparator));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter out = new StringWriter();
    // An empty class path: by default javac would take this test's, where the classes are too.
    Path noClassPath = Files.createDirectories(dir.resolve("empty"));
    boolean ok = javac.getTask(out, null, null, List.of("--module-path", modulePath,
            "--class-path", noClassPath.toString(), "-d", dir.resolve("out").toString(), "-proc:none"), null,
        javac.getStandardFileManager(null, null, null).getJavaFileObjects(
            src.resolve("module-info.java"), src.resolve("app/App.java"))).call();
    return (ok ? "compiled" : "failed") + "\n" + out;
  }

  @Test
  void aConsumerModuleCompilesAgainstTheApi() throws IOException {
    String result = compile("""
        import dev.sluice.RateLimiter;
        import dev.sluice.Rule;
        import dev.sluice.Sluice;
        import dev.sluice.Window;
        import dev.sluice.config.ConfigLoader;
        import dev.sluice.memory.MemoryStore;
        import dev.sluice.spi.Store;
        """, """
          static RateLimiter limiter() {
            Store store = MemoryStore.builder().maxKeys(100).build();
            return Sluice.builder().store(store)
                .rules(Rule.builder("api").window(Window.of(10, java.time.Duration.ofSeconds(1))).build()).build();
          }
          static Object config() throws Exception {
            return ConfigLoader.parse("limits: []", "app.yaml");
          }
        """);

    assertThat(result).startsWith("compiled");
  }

  @Test
  void aConsumerModuleReadsEnvoyFilesWithTheCoreAndItsYamlReaderAlone() throws IOException {
    String result = compile("""
        import dev.sluice.config.envoy.EnvoyConfigParser;
        import dev.sluice.config.envoy.EnvoyDomain;
        import dev.sluice.config.envoy.EnvoyEntry;
        import dev.sluice.config.envoy.EnvoyMatch;
        import java.util.List;
        """, """
          static EnvoyMatch match() throws Exception {
            EnvoyDomain d = EnvoyConfigParser.parse("edge.yaml", "domain: edge");
            return d.match(List.of(new EnvoyEntry("remote_address", "10.0.0.1")));
          }
        """);

    assertThat(result).startsWith("compiled");
  }

  @Test
  void theEngineIsNotVisibleOutsideTheModule() throws IOException {
    String result = compile("import dev.sluice.internal.Engine;", "Engine engine;");

    assertThat(result).startsWith("failed").contains("package dev.sluice.internal is not visible")
        .contains("(package dev.sluice.internal is declared in module dev.sluice.core, which does not export it)");
  }

  @Test
  void theYamlTreeExportedToTheServiceIsNotVisibleToOtherModules() throws IOException {
    String result = compile("import dev.sluice.config.yaml.YamlTree;", "YamlTree tree;");

    assertThat(result).startsWith("failed").contains("package dev.sluice.config.yaml is not visible")
        .contains("which does not export it to module app");
  }

  @Test
  void theAlgorithmStateClassesExportedToTheRedisStoreAreNotVisibleToOtherModules() throws IOException {
    String result = compile("import dev.sluice.algorithm.KeyState;", "KeyState state;");

    assertThat(result).startsWith("failed").contains("package dev.sluice.algorithm is not visible")
        .contains("which does not export it to module app");
  }

  @Test
  void thePolicyLayerExportedToTheRedisStoreIsNotVisibleToOtherModules() throws IOException {
    String result = compile("import dev.sluice.internal.policy.PolicyCache;", "PolicyCache cache;");

    assertThat(result).startsWith("failed").contains("package dev.sluice.internal.policy is not visible")
        .contains("which does not export it to module app");
  }
}
