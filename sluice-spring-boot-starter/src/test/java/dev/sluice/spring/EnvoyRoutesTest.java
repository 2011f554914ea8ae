package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.spring.web.FluxApp;
import dev.sluice.spring.web.Http;
import dev.sluice.spring.web.MvcApp;
import dev.sluice.spring.web.WebApps;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Routes decided through an Envoy domain read from {@code sluice.config}, in running servlet and
 * WebFlux applications on a real port: denials answer as for operations, and the file reloads.
 * Polls are run by the test, not by the clock.
 */
class EnvoyRoutesTest {
  static final String EDGE = """
      domain: edge
      descriptors:
        - key: remote_address
          rate_limit: {unit: minute, requests_per_unit: 3}
        - key: generic_key
          value: api
          descriptors:
            - key: user
              rate_limit: {unit: minute, requests_per_unit: 2}
        - key: tenant
          rate_limit: {unit: minute, requests_per_unit: 1}
        - key: blocked
          rate_limit: {unit: hour, requests_per_unit: 0}
      """;

  /** The rules of the test applications' annotated methods. */
  static final String RULES = """
      limits:
        - name: per_caller
          config:
            - {limit: 2, period: 60}
        - name: per_tenant
          config:
            - {limit: 3, period: 60}
      operations:
        - name: tenant.call
          items:
            - {rule: per_tenant, key: "tenant:{tenant}"}
      """;

  private static ConfigurableApplicationContext start(Class<?> app, WebApplicationType type, Path config,
      String... more) {
    String[] props = {
        "sluice.config=" + config,
        "sluice.rules=" + RULES,
        "sluice.reload-interval=1h",
        "sluice.web.routes[0].path=/api/**",
        "sluice.web.routes[0].domain=edge",
        "sluice.web.routes[0].descriptors[0].generic_key=value:api",
        "sluice.web.routes[0].descriptors[0].user=header:X-User",
        "sluice.web.routes[1].path=/addr",
        "sluice.web.routes[1].domain=edge",
        "sluice.web.routes[1].descriptors[0].remote_address=client-ip"};
    String[] all = new String[props.length + more.length];
    System.arraycopy(props, 0, all, 0, props.length);
    System.arraycopy(more, 0, all, props.length, more.length);
    return WebApps.start(app, type, all);
  }

  @Test
  void theThirdCallOfAUserIsDeniedWith429TheRateLimitFieldsAndAProblem(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("edge.yaml"), EDGE);
    try (ConfigurableApplicationContext app = start(MvcApp.class, WebApplicationType.SERVLET, dir)) {
      int port = WebApps.port(app);
      WebApps.awayFromAMinuteBoundary();
      String policy = "\"envoy:edge/generic_key:api/user.60s\";q=2;w=60";
      for (int i = 1; i <= 2; i++) {
        HttpResponse<String> ok = Http.get(port, "/api/items", "X-User", "ada");
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("items");
        assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue(policy);
        assertThat(ok.headers().firstValue("RateLimit").orElseThrow())
            .startsWith("\"envoy:edge/generic_key:api/user.60s\";r=" + (2 - i) + ";t=");
      }
      HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", "ada");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue(policy);
      assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
      JsonNode p = Http.json(denied);
      assertThat(p.get("type").asText()).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
      assertThat(p.get("status").asInt()).isEqualTo(429);
      assertThat(p.get("detail").asText()).isEqualTo("envoy:edge/generic_key:api/user.60s: 2 per 60s exceeded");
      assertThat(p.get("violated-policies").toString()).isEqualTo("[\"envoy:edge/generic_key:api/user.60s\"]");

      // Another user has a counter of their own: the entry's value came from the header.
      assertThat(Http.get(port, "/api/items", "X-User", "bob").statusCode()).isEqualTo(200);
      // Without the header, Envoy would not send the descriptor: nothing limits the request.
      HttpResponse<String> anonymous = Http.get(port, "/api/items");
      assertThat(anonymous.statusCode()).isEqualTo(200);
      assertThat(anonymous.headers().firstValue("RateLimit-Policy")).isEmpty();

      for (int i = 0; i < 3; i++) {
        assertThat(Http.get(port, "/addr").statusCode()).isEqualTo(200);
      }
      assertThat(Http.get(port, "/addr").statusCode()).isEqualTo(429);
    }
  }

  @Test
  void aZeroLimitDeniesEveryRequestAndConsumesNothingElsewhere(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("edge.yaml"), EDGE);
    try (ConfigurableApplicationContext app = start(MvcApp.class, WebApplicationType.SERVLET, dir,
        "sluice.web.routes[2].path=/by-header",
        "sluice.web.routes[2].domain=edge",
        "sluice.web.routes[2].descriptors[0].remote_address=client-ip",
        "sluice.web.routes[2].descriptors[1].blocked=value:yes")) {
      int port = WebApps.port(app);
      WebApps.awayFromAMinuteBoundary();
      HttpResponse<String> denied = Http.get(port, "/by-header");
      assertThat(denied.statusCode()).isEqualTo(429);
      JsonNode p = Http.json(denied);
      assertThat(p.get("detail").asText()).contains("envoy:edge/blocked.3600s: 0 per 3600s, the cost can never fit");
      // It never fits: no time to come back after.
      assertThat(denied.headers().firstValue("Retry-After")).isEmpty();
      // The request was denied: the other limit it met only looked, and consumed nothing.
      for (int i = 0; i < 3; i++) {
        assertThat(Http.get(port, "/addr").statusCode()).isEqualTo(200);
      }
      assertThat(Http.get(port, "/addr").statusCode()).isEqualTo(429);
    }
  }

  @Test
  void quotaModeLimitsDenyOnlyWhenAllOfTheRequestsAreOverAndAnOversizeValueIsA400(@TempDir Path dir)
      throws Exception {
    Files.writeString(dir.resolve("edge.yaml"), EDGE);
    Files.writeString(dir.resolve("quota.yaml"), """
        domain: quota
        descriptors:
          - key: q1
            quota_mode: true
            rate_limit: {unit: minute, requests_per_unit: 1}
          - key: q2
            quota_mode: true
            rate_limit: {unit: minute, requests_per_unit: 2}
        """);
    try (ConfigurableApplicationContext app = start(MvcApp.class, WebApplicationType.SERVLET, dir,
        "sluice.web.routes[2].path=/by-header",
        "sluice.web.routes[2].domain=quota",
        "sluice.web.routes[2].descriptors[0].q1=value:a",
        "sluice.web.routes[2].descriptors[1].q2=value:b")) {
      int port = WebApps.port(app);
      WebApps.awayFromAMinuteBoundary();
      assertThat(Http.get(port, "/by-header").statusCode()).isEqualTo(200);
      // q1 is over its limit, q2 is not: a quota-mode limit alone denies nothing.
      assertThat(Http.get(port, "/by-header").statusCode()).isEqualTo(200);
      HttpResponse<String> denied = Http.get(port, "/by-header");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(Http.json(denied).get("violated-policies").toString())
          .isEqualTo("[\"envoy:quota/q1.60s\",\"envoy:quota/q2.60s\"]");

      HttpResponse<String> tooLong = Http.get(port, "/api/items", "X-User", "u".repeat(600));
      assertThat(tooLong.statusCode()).isEqualTo(400);
      assertThat(tooLong.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(Http.json(tooLong).get("detail").asText()).startsWith("the request cannot be rate limited");
    }
  }

  @Test
  void aReloadOfTheEnvoyFileChangesTheLimitAndABadOneIsRejected(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("edge.yaml"), EDGE);
    try (ConfigurableApplicationContext app = start(MvcApp.class, WebApplicationType.SERVLET, dir,
        "sluice.web.routes[2].path=/tenants/{tenant}/**",
        "sluice.web.routes[2].domain=edge",
        "sluice.web.routes[2].descriptors[0].tenant=path-variable:tenant")) {
      int port = WebApps.port(app);
      WebApps.awayFromAMinuteBoundary();
      ConfigWatcher watcher = app.getBean(ConfigWatcher.class);
      assertThat(Http.get(port, "/tenants/a/items").statusCode()).isEqualTo(200);
      assertThat(Http.get(port, "/tenants/a/items").statusCode()).isEqualTo(429);

      write(file, EDGE.replace("key: tenant\n    rate_limit: {unit: minute, requests_per_unit: 1}",
          "key: tenant\n    rate_limit: {unit: minute, requests_per_unit: 3}"), 1);
      assertThat(watcher.poll()).isTrue();
      for (int i = 0; i < 3; i++) {
        assertThat(Http.get(port, "/tenants/b/items").statusCode()).isEqualTo(200);
      }
      HttpResponse<String> denied = Http.get(port, "/tenants/b/items");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"envoy:edge/tenant.60s\";q=3;w=60");

      // A file that leaves the route's descriptor without a limit is rejected, whole.
      write(file, EDGE.replace("key: tenant", "key: team").replace("requests_per_unit: 3", "requests_per_unit: 9"), 2);
      assertThat(watcher.poll()).isFalse();
      assertThat(watcher.lastError()).contains("sluice.web.routes[2].descriptors[0] (tenant)", "domain 'edge'");
      assertThat(Http.get(port, "/tenants/c/items").statusCode()).isEqualTo(200);
      assertThat(Http.get(port, "/tenants/c/items").headers().firstValue("RateLimit-Policy"))
          .hasValue("\"envoy:edge/tenant.60s\";q=3;w=60");
    }
  }

  @Test
  void aWebFluxApplicationIsDeniedWithTheSameAnswer(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("edge.yaml"), EDGE);
    try (ConfigurableApplicationContext app = start(FluxApp.class, WebApplicationType.REACTIVE, dir)) {
      int port = WebApps.port(app);
      WebApps.awayFromAMinuteBoundary();
      assertThat(Http.get(port, "/api/items", "X-User", "ada").statusCode()).isEqualTo(200);
      assertThat(Http.get(port, "/api/items", "X-User", "ada").statusCode()).isEqualTo(200);
      HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", "ada");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(denied.headers().firstValue("Retry-After")).isPresent();
      assertThat(Http.json(denied).get("violated-policies").get(0).asText())
          .isEqualTo("envoy:edge/generic_key:api/user.60s");
      HttpResponse<String> anonymous = Http.get(port, "/api/items");
      assertThat(anonymous.statusCode()).isEqualTo(200);
      assertThat(anonymous.body()).isEqualTo("items");
    }
  }

  /** Writes {@code text} with a modification time of its own, so that a poll sees the change. */
  private static void write(Path file, String text, int generation) throws Exception {
    Files.writeString(file, text);
    Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2020-01-01T00:00:00Z").plusSeconds(generation)));
  }
}
