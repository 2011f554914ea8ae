package dev.sluice.spring.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.spring.SluiceConfigurationException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter's filter in an application secured by Spring Security, servlet or WebFlux: the
 * route runs after authentication, keyed by the principal, and leaves Security's own answers alone.
 * Each test has users of its own: they share one running application.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SpringSecurityContract {
  private ConfigurableApplicationContext app;
  private int port;

  /** The application, one of {@link SecuredApps}'s. */
  abstract Class<?> application();

  abstract WebApplicationType type();

  @BeforeAll
  void startApp() {
    app = start();
    port = WebApps.port(app);
  }

  @AfterAll
  void stopApp() {
    if (app != null) {
      app.close();
    }
  }

  /** Starts the application with {@link SecuredApps#properties} and {@code extra}. */
  private ConfigurableApplicationContext start(String... extra) {
    return WebApps.startSecured(application(), type(), SecuredApps.properties(extra));
  }

  final ConfigurableApplicationContext app() {
    return app;
  }

  /** The filters that see a request, in the order they see it: Security's and Sluice's. */
  abstract List<Object> filtersInOrder();

  abstract boolean isSecurity(Object filter);

  abstract boolean isSluice(Object filter);

  static String[] basic(String user, String password) {
    String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    return new String[] {"Authorization", "Basic " + token};
  }

  static String[] as(String user) {
    return basic(user, SecuredApps.PASSWORD);
  }

  private int calls(String path) {
    return app.getBean(SecuredApps.Handlers.class).calls(path);
  }

  @Test
  void sluicesFilterRunsAfterSpringSecuritysSoThePrincipalIsKnown() {
    List<Object> filters = filtersInOrder();
    int security = -1;
    int sluice = -1;
    for (int i = 0; i < filters.size(); i++) {
      if (isSecurity(filters.get(i))) {
        security = i;
      }
      if (isSluice(filters.get(i))) {
        sluice = i;
      }
    }
    assertThat(security).as("Spring Security's filter in %s", filters).isNotNegative();
    assertThat(sluice).as("Sluice's filter in %s", filters).isGreaterThan(security);
  }

  @Test
  void aFilterOrderBeforeSecuritysStopsTheStartOfRoutesReadingThePrincipal() {
    assertThatThrownBy(() -> start("sluice.web.filter-order=-200").close())
        .isInstanceOf(SluiceConfigurationException.class)
        .hasMessageContaining("sluice.web.routes[0], sluice.web.routes[1], sluice.web.routes[2], "
            + "sluice.web.routes[3] read the principal, but sluice.web.filter-order (-200) runs Sluice's filter "
            + "before Spring Security's");
  }

  @Test
  void aRouteKeyedByThePrincipalLimitsEachUserSeparately() {
    int before = calls("/api/items");
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> ok = Http.get(port, "/api/items", as("alice"));
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=" + (5 - i) + ";");
    }
    HttpResponse<String> denied = Http.get(port, "/api/items", as("alice"));
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(Http.json(denied).get("violated-policies").get(0).asText()).isEqualTo("per_user.60s");
    // Spring Security's own headers are still written on Sluice's answer.
    assertThat(denied.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
    assertThat(calls("/api/items")).as("the denied call did not reach the controller").isEqualTo(before + 5);

    HttpResponse<String> other = Http.get(port, "/api/items", as("bob"));
    assertThat(other.statusCode()).isEqualTo(200);
    assertThat(other.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=4;");
    assertThat(calls("/api/items")).isEqualTo(before + 6);
  }

  @Test
  void anUnauthenticatedRequestToAProtectedPathIsSecuritys401AndTakesNoQuota() {
    int before = calls("/api/items");
    for (int i = 0; i < 7; i++) {
      HttpResponse<String> anonymous = Http.get(port, "/api/items");
      assertThat(anonymous.statusCode()).isEqualTo(401);
      assertThat(anonymous.headers().firstValue("WWW-Authenticate").orElseThrow()).startsWith("Basic");
      assertThat(anonymous.headers().firstValue("RateLimit")).isEmpty();
      HttpResponse<String> wrongPassword = Http.get(port, "/api/items", basic("carol", "not-" + SecuredApps.PASSWORD));
      assertThat(wrongPassword.statusCode()).isEqualTo(401);
      assertThat(wrongPassword.headers().firstValue("RateLimit")).isEmpty();
    }
    assertThat(calls("/api/items")).isEqualTo(before);
    // carol's failed attempts counted nothing against her.
    HttpResponse<String> ok = Http.get(port, "/api/items", as("carol"));
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=4;");
  }

  @Test
  void aForbiddenRequestIsSecuritys403AndTakesNoQuota() {
    int before = calls("/admin/items");
    for (int i = 0; i < 7; i++) {
      HttpResponse<String> forbidden = Http.get(port, "/admin/items", as("dave"));
      assertThat(forbidden.statusCode()).isEqualTo(403);
      assertThat(forbidden.headers().firstValue("RateLimit")).isEmpty();
    }
    assertThat(calls("/admin/items")).isEqualTo(before);
    HttpResponse<String> dave = Http.get(port, "/api/items", as("dave"));
    assertThat(dave.statusCode()).isEqualTo(200);
    assertThat(dave.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=4;");
    HttpResponse<String> root = Http.get(port, "/admin/items", as("root"));
    assertThat(root.statusCode()).isEqualTo(200);
    assertThat(root.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=4;");
    assertThat(calls("/admin/items")).isEqualTo(before + 1);
  }

  @Test
  void anAnonymousRequestToAPermittedPathWhoseKeyNeedsThePrincipalIsA400Problem() {
    int before = calls("/public/strict");
    HttpResponse<String> anonymous = Http.get(port, "/public/strict");
    assertThat(anonymous.statusCode()).isEqualTo(400);
    assertThat(anonymous.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(Http.json(anonymous).get("detail").asText()).contains("user");
    assertThat(calls("/public/strict")).isEqualTo(before);

    HttpResponse<String> erin = Http.get(port, "/public/strict", as("erin"));
    assertThat(erin.statusCode()).isEqualTo(200);
    assertThat(erin.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=4;");
    assertThat(calls("/public/strict")).isEqualTo(before + 1);
  }

  @Test
  void anAnonymousRequestToAPermittedPathIsCountedAsTheOperationSaysForNoUser() {
    int before = calls("/public/open");
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> anonymous = Http.get(port, "/public/open");
      assertThat(anonymous.statusCode()).isEqualTo(200);
      assertThat(anonymous.headers().firstValue("RateLimit-Policy")).hasValue("\"per_ip.60s\";q=2;w=60");
    }
    HttpResponse<String> denied = Http.get(port, "/public/open");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(Http.json(denied).get("violated-policies").get(0).asText()).isEqualTo("per_ip.60s");
    assertThat(calls("/public/open")).isEqualTo(before + 2);

    HttpResponse<String> frank = Http.get(port, "/public/open", as("frank"));
    assertThat(frank.statusCode()).isEqualTo(200);
    assertThat(frank.headers().firstValue("RateLimit-Policy")).hasValue("\"per_user.60s\";q=5;w=60");
  }
}
