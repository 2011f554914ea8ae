package dev.sluice.spring.web;

import static dev.sluice.spring.web.WebApps.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.spring.SluiceConfigurationException;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/** The WebFlux filter and reactive {@code @RateLimited} methods, on a real port. */
class WebFluxFilterTest {
  private static ConfigurableApplicationContext app;
  private static int port;

  @BeforeAll
  static void startApp() {
    app = start(FluxApp.class, WebApplicationType.REACTIVE,
        "sluice.rules=" + MvcApp.RULES,
        "sluice.web.routes[0].path=/api/**",
        "sluice.web.routes[0].operation=api.call",
        "sluice.web.routes[0].attributes.user=header:X-User",
        "sluice.web.routes[1].path=/addr",
        "sluice.web.routes[1].operation=addr.call",
        "sluice.web.routes[1].attributes.ip=client-ip");
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
    }
    HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", "ada");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    JsonNode p = Http.json(denied);
    assertThat(p.get("type").asText()).endsWith("#quota-exceeded");
    assertThat(p.get("violated-policies").get(0).asText()).isEqualTo("per_user.60s");
  }

  @Test
  void aSpoofedForwardedForFromAnUntrustedPeerIsIgnored() {
    assertThat(Http.get(port, "/addr", "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
    assertThat(Http.get(port, "/addr", "X-Forwarded-For", "203.0.113.2").statusCode()).isEqualTo(200);
    assertThat(Http.get(port, "/addr", "X-Forwarded-For", "203.0.113.3").statusCode()).isEqualTo(429);
  }

  @Test
  void aReactiveAnnotatedMethodIsDeniedWithTheSameAnswer() {
    assertThat(Http.get(port, "/annotated/eve").body()).isEqualTo("hello eve");
    assertThat(Http.get(port, "/annotated/eve").statusCode()).isEqualTo(200);
    HttpResponse<String> denied = Http.get(port, "/annotated/eve");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
    assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per_caller.60s\";q=2;w=60");
    assertThat(Http.json(denied).get("violated-policies").get(0).asText()).isEqualTo("per_caller.60s");
  }

  @Test
  void aFluxMethodIsDecidedOncePerSubscription() {
    for (int i = 0; i < 3; i++) {
      assertThat(Http.get(port, "/stream/acme").statusCode()).isEqualTo(200);
    }
    assertThat(Http.get(port, "/stream/acme").statusCode()).isEqualTo(429);
  }

  @Test
  void aRouteThatMatchesNoHandlerStopsTheStart() {
    assertThatThrownBy(() -> start(FluxApp.class, WebApplicationType.REACTIVE,
        "sluice.rules=" + MvcApp.RULES,
        "sluice.web.routes[0].path=/nowhere/**",
        "sluice.web.routes[0].operation=api.call",
        "sluice.web.routes[0].attributes.user=principal"))
        .isInstanceOf(SluiceConfigurationException.class)
        .hasMessageContaining("sluice.web.routes[0] (/nowhere/**) matches no handler");
  }
}
