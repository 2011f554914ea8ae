package dev.sluice.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BanPolicy;
import dev.sluice.policy.ListKind;
import dev.sluice.RateLimiter;
import dev.sluice.Sluice;
import dev.sluice.testing.FakeTicker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tiers, bans, audits and access lists are reloaded with the rules, all of an edit or none of it. */
class PolicyConfigReloadTest {
  @TempDir
  Path dir;

  @Test
  void aReloadWithABadBanKeepsTheRulesTiersAndListsInForce() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: a
            config: [{limit: 3, period: 60}]
            ban: {after: 5, within: 1m, for: 15m}
            deny: ["ip:10.0.0.0/8"]
        """);
    Files.writeString(dir.resolve("tiers.yaml"), "tiers:\n  free: [{limit: 10, period: 1m}]\n");
    try (RateLimiter limiter = Sluice.builder().ticker(new FakeTicker()).build();
        ConfigReloader r = new ConfigReloader(dir, limiter, (ok, c, e) -> {}, Clock.systemUTC())) {
      assertThat(limiter.rules().get("a").ban()).isEqualTo(new BanPolicy(5, Duration.ofMinutes(1),
          Duration.ofMinutes(15)));
      assertThat(limiter.rules().tiers().keySet()).containsExactly("free");
      assertThat(limiter.rules().lists(ListKind.DENY)).containsExactly(Map.entry("a", List.of("ip:10.0.0.0/8")));

      // One edit: a new tier, a new list entry, and a ban out of range. None of it applies.
      Files.writeString(dir.resolve("tiers.yaml"), "tiers:\n  free: [{limit: 10, period: 1m}]\n"
          + "  gold: [{limit: 99, period: 1m}]\n");
      Files.writeString(dir.resolve("limits.yaml"), """
          limits:
            - name: a
              config: [{limit: 3, period: 60}]
              ban: {after: 5, within: 2d, for: 15m}
              deny: ["ip:10.0.0.0/8", "ip:192.168.0.0/16"]
          """);
      assertThat(r.check()).isFalse();
      assertThat(r.status().lastError()).contains("limits.yaml:4:29: ban.within must be between 1ms and 1d, found 2d");
      assertThat(limiter.rules().get("a").ban().within()).isEqualTo(Duration.ofMinutes(1));
      assertThat(limiter.rules().tiers().keySet()).containsExactly("free");
      assertThat(limiter.rules().lists(ListKind.DENY)).containsExactly(Map.entry("a", List.of("ip:10.0.0.0/8")));

      // Fixed: all of it applies at once.
      Files.writeString(dir.resolve("limits.yaml"), """
          limits:
            - name: a
              config: [{limit: 3, period: 60}]
              ban: {after: 5, within: 1h, for: 15m}
              deny: ["ip:10.0.0.0/8", "ip:192.168.0.0/16"]
          """);
      assertThat(r.check()).isTrue();
      assertThat(limiter.rules().get("a").ban().within()).isEqualTo(Duration.ofHours(1));
      assertThat(limiter.rules().tiers().keySet()).containsExactly("free", "gold");
      assertThat(limiter.rules().lists(ListKind.DENY))
          .containsExactly(Map.entry("a", List.of("ip:10.0.0.0/8", "ip:192.168.0.0/16")));
    }
  }
}
