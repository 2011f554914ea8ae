package dev.sluice.spring.web;

import static dev.sluice.spring.web.WebApps.start;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/** {@code sluice.web.headers}: which answers carry the RateLimit fields, in both kinds of application. */
class HeadersSettingTest {
  private static final String[] ROUTE = {
      "sluice.rules=" + MvcApp.RULES,
      "sluice.web.routes[0].path=/api/**",
      "sluice.web.routes[0].operation=api.call",
      "sluice.web.routes[0].attributes.user=header:X-User"};

  @Test
  void onDenialLeavesAdmittedAnswersBareAndExplainsTheDenial() {
    try (ConfigurableApplicationContext app = start(MvcApp.class, WebApplicationType.SERVLET,
        with("sluice.web.headers=on-denial"))) {
      int port = WebApps.port(app);
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> ok = Http.get(port, "/api/items", "X-User", "ada");
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.headers().firstValue("RateLimit-Policy")).isEmpty();
        assertThat(ok.headers().firstValue("RateLimit")).isEmpty();
      }
      HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", "ada");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per_user.60s\";q=5;w=60");
      assertThat(denied.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per_user.60s\";r=0;t=");
      assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    }
  }

  @Test
  void neverKeepsRetryAfterOnADenialOnly() {
    try (ConfigurableApplicationContext app = start(FluxApp.class, WebApplicationType.REACTIVE,
        with("sluice.web.headers=never"))) {
      int port = WebApps.port(app);
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> ok = Http.get(port, "/api/items", "X-User", "ada");
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.headers().firstValue("RateLimit")).isEmpty();
      }
      HttpResponse<String> denied = Http.get(port, "/api/items", "X-User", "ada");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("RateLimit-Policy")).isEmpty();
      assertThat(denied.headers().firstValue("RateLimit")).isEmpty();
      assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 60L);
      assertThat(denied.body()).contains("quota-exceeded");
    }
  }

  private static String[] with(String setting) {
    String[] all = java.util.Arrays.copyOf(ROUTE, ROUTE.length + 1);
    all[ROUTE.length] = setting;
    return all;
  }
}
