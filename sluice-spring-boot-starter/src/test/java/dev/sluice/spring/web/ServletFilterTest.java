package dev.sluice.spring.web;

import static dev.sluice.spring.web.WebApps.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.spring.SluiceConfigurationException;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/** The servlet filter and the annotation in a running servlet application, on a real port. */
class ServletFilterTest {
  private static ConfigurableApplicationContext app;
  private static int port;

  @BeforeAll
  static void startApp() {
    app = start(MvcApp.class, WebApplicationType.SERVLET,
        "sluice.rules=" + MvcApp.RULES,
        "sluice.web.trusted-proxies[0]=127.0.0.1",
        "sluice.web.routes[0].path=/api/**",
        "sluice.web.routes[0].operation=api.call",
        "sluice.web.routes[0].attributes.user=header:X-User",
        "sluice.web.routes[1].path=/addr",
        "sluice.web.routes[1].methods[0]=GET",
        "sluice.web.routes[1].operation=addr.call",
        "sluice.web.routes[1].attributes.ip=client-ip",
        "sluice.web.routes[2].path=/tenants/{tenant}/**",
        "sluice.web.routes[2].operation=tenant.call",
        "sluice.web.routes[2].attributes.tenant=path-variable:tenant",
        "sluice.web.routes[3].path=/by-header",
        "sluice.web.routes[3].operation=tenant.call",
        "sluice.web.routes[3].attributes.tenant=header:X-Tenant",
        "management.endpoints.web.exposure.include=health,sluice",
        "management.endpoint.health.show-components=always",
        "spring.mvc.problemdetails.enabled=true");
    port = WebApps.port(app);
  }

  @AfterAll
  static void stopApp() {
    if (app != null) {
      app.close();
    }
  }

  @Test
  void theSixthCallIsDeniedWith429TheRateLimitFieldsRetryAfterAndAProblem() {
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> ok = Http.get(port, "/api/items", "X-User", "ada");
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("items");
      assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue("\"per_user.60s\";q=5;w=60");
      assertThat(ok.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=" + (5 - i) + ";t=");
      assertThat(ok.headers().firstValue("Retry-After")).isEmpty();
    }
    HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", "ada");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(denied.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=0;t=");
    assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
    JsonNode p = Http.json(denied);
    assertThat(p.get("type").asText()).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
    assertThat(p.get("title").asText()).isEqualTo("Request cannot be satisfied as assigned quota has been exceeded");
    assertThat(p.get("status").asInt()).isEqualTo(429);
    assertThat(p.get("detail").asText()).isEqualTo("per_user.60s: 5 per 60s exceeded");
    assertThat(p.get("violated-policies").toString()).isEqualTo("[\"per_user.60s\"]");
    // Another user still has room: the key came from the header.
    assertThat(Http.get(port, "/api/items", "X-User", "bob").statusCode()).isEqualTo(200);
  }

  @Test
  void theClientAddressIsReadFromForwardedHeadersOfATrustedProxy() {
    assertThat(Http.get(port, "/addr", "X-Forwarded-For", "198.51.100.1").statusCode()).isEqualTo(200);
    assertThat(Http.get(port, "/addr", "X-Forwarded-For", "198.51.100.1").statusCode()).isEqualTo(200);
    assertThat(Http.get(port, "/addr", "X-Forwarded-For", "198.51.100.1").statusCode()).isEqualTo(429);
    assertThat(Http.get(port, "/addr", "Forwarded", "for=198.51.100.2").statusCode()).isEqualTo(200);
  }

  @Test
  void pathVariablesKeyTheirOwnLimits() {
    for (int i = 0; i < 3; i++) {
      assertThat(Http.get(port, "/tenants/acme/items").statusCode()).isEqualTo(200);
    }
    assertThat(Http.get(port, "/tenants/acme/items").statusCode()).isEqualTo(429);
    assertThat(Http.get(port, "/tenants/other/items").statusCode()).isEqualTo(200);
  }

  @Test
  void aRequestWithoutTheAttributeItsOperationNeedsIsA400Problem() {
    HttpResponse<String> r = Http.get(port, "/by-header");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(Http.json(r).get("detail").asText()).contains("tenant");
  }

  @Test
  void anAnnotatedControllerMethodIsDeniedWithTheSameAnswer() {
    assertThat(Http.get(port, "/annotated/eve").body()).isEqualTo("hello eve");
    assertThat(Http.get(port, "/annotated/eve").statusCode()).isEqualTo(200);
    HttpResponse<String> denied = Http.get(port, "/annotated/eve");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
    assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per_caller.60s\";q=2;w=60");
    assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    JsonNode p = Http.json(denied);
    assertThat(p.get("type").asText()).endsWith("#quota-exceeded");
    assertThat(p.get("violated-policies").get(0).asText()).isEqualTo("per_caller.60s");
  }

  @Test
  void bootsOwnProblemHandlingStillAnswersEveryOtherError() {
    HttpResponse<String> wrongMethod = Http.post(port, "/annotated/eve");
    assertThat(wrongMethod.statusCode()).isEqualTo(405);
    assertThat(wrongMethod.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
    JsonNode p = Http.json(wrongMethod);
    assertThat(p.get("status").asInt()).isEqualTo(405);
    assertThat(p.get("title").asText()).isEqualTo("Method Not Allowed");
    assertThat(p.has("violated-policies")).isFalse();
  }

  @Test
  void decisionsAreCountedInTheApplicationsRegistryAndTheActuatorShowsTheLimiter() {
    Http.get(port, "/tenants/metered/items");
    MeterRegistry registry = app.getBean(MeterRegistry.class);
    assertThat(registry.get("sluice.decisions").tag("rule", "per_tenant").tag("outcome", "allowed").counter().count())
        .isGreaterThanOrEqualTo(1);
    assertThat(registry.get("sluice.rules").gauge().value()).isEqualTo(4);
    // Every kind of store error from the start, at 0, as the service exports them: an alert on a
    // series that appears only with the first error never sees it rise.
    for (String kind : java.util.List.of("timeout", "overloaded", "unavailable", "rejected")) {
      assertThat(registry.get("sluice.store.errors.by.kind").tag("kind", kind).counter().count()).isZero();
    }

    dev.sluice.RateLimiter limiter = app.getBean(dev.sluice.RateLimiter.class);
    limiter.policies().ban("per_addr", "ip:203.0.113.66", java.time.Instant.now().plusSeconds(600))
        .toCompletableFuture().join();
    limiter.policies().setLimit("per_user", "user:vip", dev.sluice.policy.LiveLimit.windows(
        java.util.List.of(dev.sluice.Window.perSeconds(50, 60)))).toCompletableFuture().join();
    limiter.policies().addToList(dev.sluice.policy.ListKind.DENY, "per_addr", "ip:198.51.100.0/24")
        .toCompletableFuture().join();

    HttpResponse<String> health = Http.get(port, "/actuator/health");
    assertThat(Http.json(health).at("/components/sluice/status").asText()).isEqualTo("UP");
    JsonNode endpoint = Http.json(Http.get(port, "/actuator/sluice"));
    assertThat(endpoint.at("/rules/0/name").asText()).isEqualTo("per_user");
    assertThat(endpoint.at("/rules/0/windows/0/limit").asInt()).isEqualTo(5);
    assertThat(endpoint.at("/rules/0/liveLimits").isArray()).isTrue();
    assertThat(endpoint.at("/rules/0/liveLimits/0/key").asText()).isEqualTo("user:vip");
    assertThat(endpoint.at("/rules/0/liveLimits/0/windows/0/limit").asInt()).isEqualTo(50);
    assertThat(endpoint.at("/rules/1/name").asText()).isEqualTo("per_addr");
    assertThat(endpoint.at("/rules/1/bans/0/key").asText()).isEqualTo("ip:203.0.113.66");
    assertThat(endpoint.at("/rules/1/bans/0/automatic").asBoolean()).isFalse();
    assertThat(endpoint.at("/rules/1/denyList/0").asText()).isEqualTo("ip:198.51.100.0/24");
    assertThat(endpoint.at("/rules/1/allowList").isEmpty()).isTrue();
    assertThat(endpoint.at("/operations").size()).isEqualTo(3);
  }

  @Test
  void aRouteThatMatchesNoHandlerStopsTheStart() {
    assertThatThrownBy(() -> start(MvcApp.class, WebApplicationType.SERVLET,
        "sluice.rules=" + MvcApp.RULES,
        "sluice.web.routes[0].path=/api/**",
        "sluice.web.routes[0].operation=api.call",
        "sluice.web.routes[0].attributes.user=principal",
        "sluice.web.routes[1].path=/v2/items/**",
        "sluice.web.routes[1].operation=api.call",
        "sluice.web.routes[1].attributes.user=principal",
        "sluice.web.routes[2].path=/tenants/{tenant}/items",
        "sluice.web.routes[2].methods[0]=POST",
        "sluice.web.routes[2].operation=api.call",
        "sluice.web.routes[2].attributes.user=principal"))
        .isInstanceOf(SluiceConfigurationException.class)
        .message()
        .contains("sluice.web.routes[1] (/v2/items/**) matches no handler")
        .contains("sluice.web.routes[2] (POST /tenants/{tenant}/items) matches no handler")
        .doesNotContain("routes[0]");
  }

  @Test
  void withoutProblemDetailsADenialHasTheStatusAndFieldsOnly() {
    ConfigurableApplicationContext plain = start(MvcApp.class, WebApplicationType.SERVLET,
        "sluice.rules=" + MvcApp.RULES,
        "sluice.web.problem-details=false",
        "sluice.web.routes[0].path=/addr",
        "sluice.web.routes[0].operation=addr.call",
        "sluice.web.routes[0].attributes.ip=client-ip");
    try {
      int p = WebApps.port(plain);
      // No trusted proxy: the spoofed addresses are ignored, and every call counts against 127.0.0.1.
      assertThat(Http.get(p, "/addr", "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
      assertThat(Http.get(p, "/addr", "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(200);
      HttpResponse<String> denied = Http.get(p, "/addr", "X-Forwarded-For", "203.0.113.3");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.body()).isEmpty();
      assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    } finally {
      plain.close();
    }
  }
}
