package dev.sluice;

import dev.sluice.policy.Ban;
import dev.sluice.policy.Policies;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.ConfigLoader;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Audit and automatic bans on the default store, reached as a user reaches them: a limiter from
 * {@code Sluice.builder()} with no store given, rules from YAML, and {@link RateLimiter#policies()}.
 * Nothing is wired by hand (audit and unbans once passed tests that wired the store's parts
 * themselves, while the product built by the builder answered no audit and could not unban).
 */
class BansAndAuditThroughTheBuilderTest {
  static final String YAML = """
      attributes:
        ip: {type: ip, group: /24}
      limits:
        - name: per_ip
          config: [{limit: 3, period: 1m}]
          ban: {after: 2, within: 1m, for: 15m}
          audit: {keep: 10, attribute: user}
      operations:
        - name: call
          items:
            - {rule: per_ip, key: "ip:{ip}"}
      """;

  final FakeTicker ticker = new FakeTicker();
  final RateLimiter limiter = Sluice.builder().rules(rules()).ticker(ticker).sleeper(ticker).build();
  final Policies policies = limiter.policies();

  static RuleSet rules() {
    try {
      return ConfigLoader.parse(YAML, "policies.yaml").rules();
    } catch (dev.sluice.config.ConfigException e) {
      throw new AssertionError(e);
    }
  }

  @AfterEach
  void close() {
    limiter.close();
  }

  static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  Decision call(String user, String ip) {
    return limiter.acquire(OperationRequest.of("call", Map.of("user", user, "ip", ip)));
  }

  @Test
  void auditNamesTheUsersWhoConsumedAKeyOnTheDefaultStore() {
    assertThat(call("alice", "198.51.100.7").allowed()).isTrue();
    assertThat(call("bob", "198.51.100.8").allowed()).isTrue();
    assertThat(call("alice", "198.51.100.9").allowed()).isTrue();

    assertThat(join(policies.audit("per_ip", "ip:198.51.100.0/24"))).containsExactly("alice", "bob");
    assertThat(join(policies.audit("per_ip", "ip:203.0.113.0/24"))).isEmpty();
  }

  @Test
  void liftingAnAutomaticBanAdmitsTheKeyAgainAndItIsNoLongerListed() {
    for (int i = 0; i < 3; i++) {
      assertThat(call("u" + i, "198.51.100.1").allowed()).isTrue();
    }
    assertThat(call("x", "198.51.100.1").items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED);
    assertThat(call("x", "198.51.100.1").items().get(0).reason()).isEqualTo(DenyReason.LIMIT_EXCEEDED); // the second denial bans
    ticker.advance(Duration.ofMinutes(1));
    assertThat(call("x", "198.51.100.1").items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(join(policies.bans("per_ip", null, 10)).items()).extracting(Ban::key)
        .containsExactly("ip:198.51.100.0/24");

    assertThat(join(policies.unban("per_ip", "ip:198.51.100.0/24"))).isTrue();

    assertThat(call("x", "198.51.100.1").allowed()).isTrue();
    assertThat(join(policies.bans("per_ip", null, 10)).items()).isEmpty();
    ticker.advance(Duration.ofMinutes(16));
    assertThat(join(policies.bans("per_ip", null, 10)).items()).isEmpty();
  }

  @Test
  void aManualBanOfARuleThatBansIsAppliedByTheStoreAndLiftedByIt() {
    join(policies.ban("per_ip", "ip:192.0.2.0/24", java.time.Instant.ofEpochMilli(ticker.nowMicros() / 1000 + 60_000)));
    assertThat(call("a", "192.0.2.1").items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(join(policies.unban("per_ip", "ip:192.0.2.0/24"))).isTrue();
    assertThat(call("a", "192.0.2.1").allowed()).isTrue();
  }
}
