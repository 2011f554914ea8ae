package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Operation;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Sluice;
import dev.sluice.UnknownOperationException;
import dev.sluice.testing.FakeTicker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A reload replaces rules and operations together, or neither. */
class OperationsReloadTest {
  static final String RULES = """
      limits:
        - name: a
          config: [{limit: 3, period: 60}]
      """;

  @TempDir
  Path dir;

  @Test
  void aReloadSwapsRulesAndOperationsTogetherAndABadOperationKeepsBoth() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), RULES);
    Files.writeString(dir.resolve("ops.yaml"), """
        operations:
          - name: first
            items: [{rule: a, key: "u:{user}"}]
        """);
    try (RateLimiter limiter = Sluice.builder().ticker(new FakeTicker()).build();
        ConfigReloader r = new ConfigReloader(dir, limiter, (ok, c, e) -> {}, Clock.systemUTC())) {
      assertThat(limiter.acquire(Request.operation("first").attribute("user", "1").build()).allowed()).isTrue();

      // An operation naming a rule that the same edit removed: nothing of the edit applies.
      Files.writeString(dir.resolve("limits.yaml"), RULES.replace("name: a", "name: b"));
      assertThat(r.check()).isFalse();
      assertThat(r.status().lastError()).contains("ops.yaml:3:20: operation 'first', item 1: unknown rule 'a'");
      assertThat(limiter.rules().get("a")).isNotNull();
      assertThat(limiter.rules().operations()).extracting(Operation::name).containsExactly("first");

      Files.writeString(dir.resolve("limits.yaml"), RULES);
      Files.writeString(dir.resolve("ops.yaml"), """
          operations:
            - name: second
              items: [{rule: a, key: "u:{user}"}]
          """);
      assertThat(r.check()).isTrue();
      assertThat(limiter.rules().operations()).extracting(Operation::name).containsExactly("second");
      assertThatThrownBy(() -> limiter.acquire(Request.operation("first").attribute("user", "1").build()))
          .isInstanceOf(UnknownOperationException.class);
      // Rule a did not change, so it kept its state: the first operation's unit stays consumed.
      assertThat(limiter.acquire(Request.operation("second").attribute("user", "1").build()).items().get(0)
          .windows().get(0).remaining()).isEqualTo(1);
    }
  }
}
