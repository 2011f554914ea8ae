package dev.sluice.spring;

import static dev.sluice.spring.Fixtures.CORE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * {@code sluice.config} is reloaded as the service reloads its own: a good file replaces the rules
 * in force, a bad one — or one that would leave a route without its operation — is rejected and
 * the last good rules stay. Polls are run by the test, not by the clock.
 */
class ConfigReloadTest {
  private static final String V1 = """
      limits:
        - name: per_user
          config:
            - {limit: 5, period: 60}
      operations:
        - name: api.call
          items:
            - {rule: per_user, key: "user:{user}"}
      """;

  private final WebApplicationContextRunner web = new WebApplicationContextRunner().withConfiguration(CORE)
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withPropertyValues("sluice.reload-interval=1h", "sluice.web.routes[0].path=/api/**",
          "sluice.web.routes[0].operation=api.call", "sluice.web.routes[0].attributes.user=principal");

  @Test
  void aGoodFileReplacesTheRulesAndABadOneIsRejected(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("limits.yaml"), V1);
    web.withPropertyValues("sluice.config=" + dir).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      RateLimiter limiter = ctx.getBean(RateLimiter.class);
      ConfigWatcher watcher = ctx.getBean(ConfigWatcher.class);
      MeterRegistry meters = ctx.getBean(MeterRegistry.class);
      assertThat(watcher.poll()).isFalse();

      write(file, V1.replace("limit: 5", "limit: 7"), 1);
      assertThat(watcher.poll()).isTrue();
      assertThat(limiter.rules().get("per_user").windows().get(0).limit()).isEqualTo(7);
      assertThat(meters.get("sluice.config.reloads").tag("result", "ok").counter().count()).isEqualTo(1);

      write(file, V1.replace("limit: 5", "limit: -1"), 2);
      assertThat(watcher.poll()).isFalse();
      assertThat(watcher.lastError()).contains("limits.yaml:4");
      assertThat(limiter.rules().get("per_user").windows().get(0).limit()).isEqualTo(7);
      assertThat(meters.get("sluice.config.last.reload.ok").gauge().value()).isZero();

      // The route's operation must stay: a file without it is refused, whole.
      write(file, V1.replace("api.call", "api.other").replace("limit: 5", "limit: 9"), 3);
      assertThat(watcher.poll()).isFalse();
      assertThat(watcher.lastError()).contains("sluice.web.routes[0]", "'api.call'");
      assertThat(limiter.rules().get("per_user").windows().get(0).limit()).isEqualTo(7);
      assertThat(limiter.rules().operation("api.call")).isNotNull();

      write(file, V1.replace("limit: 5", "limit: 11"), 4);
      assertThat(watcher.poll()).isTrue();
      assertThat(watcher.lastError()).isNull();
      assertThat(limiter.rules().get("per_user").windows().get(0).limit()).isEqualTo(11);
    });
  }

  @Test
  void inlineRulesAndFilesLoadTogetherAndANameDefinedTwiceIsAnError(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), V1);
    String inline = "limits:\n  - name: extra\n    config:\n      - {limit: 1, period: 1}\n";
    web.withPropertyValues("sluice.config=" + dir, "sluice.rules=" + inline).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      assertThat(ctx.getBean(RateLimiter.class).rules().get("extra")).isNotNull();
    });
    web.withPropertyValues("sluice.config=" + dir, "sluice.rules=" + V1).run(ctx ->
        assertThat(Fixtures.misconfiguration(ctx.getStartupFailure()).getMessage()).contains("per_user"));
  }

  /** Writes {@code text} with a modification time of its own, so that a poll sees the change. */
  private static void write(Path file, String text, int generation) throws Exception {
    Files.writeString(file, text);
    Files.setLastModifiedTime(file, FileTime.from(Instant.parse("2020-01-01T00:00:00Z").plusSeconds(generation)));
  }
}
