package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.spring.web.Http;
import dev.sluice.spring.web.MvcApp;
import dev.sluice.spring.web.WebApps;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The worked example of docs/spring-boot.md's "Envoy-format files and routes", as written there:
 * its Envoy file and its {@code application.yml}, read from the page, in a servlet application on
 * the memory store and on a real Redis.
 */
class EnvoyDocumentedExampleTest {
  private static final Path DOC = Path.of("..", "docs", "spring-boot.md");

  @Test
  void onTheMemoryStore(@TempDir Path dir) throws IOException {
    runExample(dir, List.of());
  }

  @Test
  void onRedis(@TempDir Path dir) throws IOException {
    try (Standalone redis = Standalone.start(Flavor.REDIS)) {
      runExample(dir, List.of("sluice.store=" + redis.uri(), "spring.data.redis.port=" + redis.port()));
    }
  }

  private static void runExample(Path dir, List<String> store) throws IOException {
    String section = section(Files.readString(DOC), "## Envoy-format files and routes");
    List<String> blocks = yamlBlocks(section);
    assertThat(blocks).as("the section's Envoy file and application.yml").hasSizeGreaterThanOrEqualTo(2);
    Path conf = Files.createDirectories(dir.resolve("conf"));
    Files.writeString(conf.resolve("edge.yaml"), blocks.get(0));
    Path yml = dir.resolve("application.yml");
    Files.writeString(yml, blocks.get(1).replace("config: conf/", "config: " + conf));

    List<String> props = new ArrayList<>(store);
    // The test application's annotated methods name rules of their own.
    props.add("sluice.rules=" + EnvoyRoutesTest.RULES);
    List<String> excluded = new ArrayList<>(WebApps.SECURITY);
    if (store.isEmpty()) {
      excluded.addAll(WebApps.REDIS);
    }
    props.addAll(List.of("spring.config.additional-location=file:" + yml, "server.port=0",
        "server.address=127.0.0.1", "spring.autoconfigure.exclude=" + String.join(",", excluded)));
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(MvcApp.class)
        .web(WebApplicationType.SERVLET).properties(props.toArray(String[]::new)).run()) {
      int port = WebApps.port(app);
      WebApps.awayFromAMinuteBoundary();
      String user = "ada-" + System.nanoTime();
      String name = "envoy:edge/generic_key:api/user.60s";
      // The page says: 20 a minute per user, the 21st denied as any denial is.
      for (int i = 1; i <= 20; i++) {
        HttpResponse<String> ok = Http.get(port, "/api/items", "X-User", user);
        assertThat(ok.statusCode()).as("call %d", i).isEqualTo(200);
      }
      HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", user);
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("RateLimit-Policy").orElseThrow())
          .contains("\"" + name + "\";q=20;w=60");
      assertThat(denied.headers().firstValue("RateLimit")).isPresent();
      assertThat(denied.headers().firstValue("Retry-After")).isPresent();
      JsonNode p = Http.json(denied);
      assertThat(p.get("violated-policies").toString()).isEqualTo("[\"" + name + "\"]");
      assertThat(section).contains("RateLimit-Policy: \"" + name + "\";q=20;w=60")
          .contains("the 21st request of a user within a minute");
    }
  }

  private static String section(String doc, String heading) {
    int at = doc.indexOf(heading);
    assertThat(at).as("docs/spring-boot.md has '%s'", heading).isNotNegative();
    int next = doc.indexOf("\n## ", at + heading.length());
    return next < 0 ? doc.substring(at) : doc.substring(at, next);
  }

  private static List<String> yamlBlocks(String section) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("```yaml\n(.*?)```", Pattern.DOTALL).matcher(section);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }
}
