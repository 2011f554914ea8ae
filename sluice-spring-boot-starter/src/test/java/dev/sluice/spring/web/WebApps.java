package dev.sluice.spring.web;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** Starts a test application on a free port, without Boot's Redis support (no Redis runs here). */
final class WebApps {
  private WebApps() {}

  static ConfigurableApplicationContext start(Class<?> app, WebApplicationType type, String... properties) {
    String[] all = new String[properties.length + 3];
    System.arraycopy(properties, 0, all, 0, properties.length);
    all[properties.length] = "server.port=0";
    all[properties.length + 1] = "server.address=127.0.0.1";
    all[properties.length + 2] = "spring.autoconfigure.exclude="
        + "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
        + "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration,"
        + "org.springframework.boot.data.redis.autoconfigure.DataRedisRepositoriesAutoConfiguration,"
        + "org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration,"
        + "org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration";
    return new SpringApplicationBuilder(app).web(type).properties(all).run();
  }

  static int port(ConfigurableApplicationContext ctx) {
    return ((WebServerApplicationContext) ctx).getWebServer().getPort();
  }
}
