package dev.sluice.spring.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/** Starts a test application on a free port, without Boot's Redis support (no Redis runs here). */
public final class WebApps {
  public static final List<String> REDIS = List.of(
      "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.DataRedisRepositoriesAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration");
  // Spring Security is on the tests' class path for the secured applications; the others are open.
  public static final List<String> SECURITY = List.of(
      "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration");

  private WebApps() {}

  /** An application without Spring Security. */
  public static ConfigurableApplicationContext start(Class<?> app, WebApplicationType type, String... properties) {
    List<String> excluded = new ArrayList<>(REDIS);
    excluded.addAll(SECURITY);
    return run(app, type, excluded, properties);
  }

  /** An application with Spring Security's auto-configuration and the security it defines. */
  static ConfigurableApplicationContext startSecured(Class<?> app, WebApplicationType type, String... properties) {
    return run(app, type, REDIS, properties);
  }

  private static ConfigurableApplicationContext run(Class<?> app, WebApplicationType type, List<String> excluded,
      String... properties) {
    String[] all = new String[properties.length + 3];
    System.arraycopy(properties, 0, all, 0, properties.length);
    all[properties.length] = "server.port=0";
    all[properties.length + 1] = "server.address=127.0.0.1";
    all[properties.length + 2] = "spring.autoconfigure.exclude=" + String.join(",", excluded);
    // In the order given, as application.yml keeps its keys: the builder's default properties go
    // through a HashMap, and the order of an Envoy descriptor's entries is their meaning.
    Map<String, Object> ordered = new LinkedHashMap<>();
    for (String p : all) {
      int colon = p.indexOf(':');
      int equals = p.indexOf('=');
      int at = colon < 0 ? equals : equals < 0 ? colon : Math.min(colon, equals);
      ordered.put(at < 0 ? p : p.substring(0, at), at < 0 ? "" : p.substring(at + 1));
    }
    return new SpringApplicationBuilder(app).web(type)
        .initializers(ctx -> ctx.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", ordered)))
        .run();
  }

  /**
   * Waits, if fewer than 15 s of the current minute of the system clock are left, until the next
   * minute has begun: Envoy-format limits count by fixed windows of their unit, aligned to it, and
   * a test that counts a minute's requests must not see the window turn (a 21st request admitted
   * by the next minute's window was a CI failure).
   */
  public static void awayFromAMinuteBoundary() {
    long intoMinute = System.currentTimeMillis() % 60_000;
    if (intoMinute > 45_000) {
      try {
        Thread.sleep(60_000 - intoMinute + 100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  public static int port(ConfigurableApplicationContext ctx) {
    return ((WebServerApplicationContext) ctx).getWebServer().getPort();
  }
}
