package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.AuditPolicy;
import dev.sluice.LeasePolicy;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.memory.MemoryStore;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code mode: leased} and its settings in the native configuration, and where leased rules are refused. */
class LeaseConfigTest {

  static Rule only(String yaml) throws ConfigException {
    return ConfigLoader.parse(yaml, "t.yaml").rules().rules().iterator().next();
  }

  static List<String> errors(String yaml) {
    return OperationsConfigTest.errors(yaml);
  }

  @Test
  void exactIsTheDefaultAndLeasedTakesDefaultsThatFollowTheWindows() throws Exception {
    assertThat(only("limits:\n  - {name: r, config: [{limit: 100, period: 1m}]}\n").lease()).isNull();
    assertThat(only("limits:\n  - {name: r, mode: exact, config: [{limit: 100, period: 1m}]}\n").lease()).isNull();
    assertThat(only("limits:\n  - {name: r, mode: leased, config: [{limit: 50000, period: 1s}]}\n").lease())
        .isEqualTo(new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0.01));
    // A window shorter than the default lease shortens the lease, and the reports with it.
    assertThat(only("limits:\n  - {name: r, mode: leased, config: [{limit: 50000, period: 1s}, "
        + "{limit: 10000, period: 100ms}]}\n").lease())
        .isEqualTo(new LeasePolicy(Duration.ofMillis(100), Duration.ofMillis(50), 0.01));
  }

  @Test
  void theSettingsAreRead() throws Exception {
    Rule r = only("""
        limits:
          - name: api.global
            algorithm: token_bucket
            mode: leased
            lease_length: 2s
            report_interval: 250ms
            lease_slack: 0.5%
            config: [{limit: 50000, period: 10s}]
        """);
    assertThat(r.lease()).isEqualTo(new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(250), 0.005));
    assertThat(r.lease().budget(r.windows())).isEqualTo(250);
    assertThat(only("limits:\n  - {name: r, mode: leased, lease_slack: 0.02, config: [{limit: 1000, period: 1s}]}\n")
        .lease().slack()).isEqualTo(0.02);
  }

  @Test
  void badSettingsAreErrorsNamingTheField() {
    assertThat(errors("limits:\n  - {name: r, mode: lease, config: [{limit: 100, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("mode must be exact or leased, found 'lease'"));
    assertThat(errors("limits:\n  - {name: r, lease_length: 1s, config: [{limit: 100, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("lease_length applies only to rules with mode: leased"));
    assertThat(errors("limits:\n  - {name: r, mode: exact, lease_slack: 1%, config: [{limit: 100, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("lease_slack applies only to rules with mode: leased"));
    assertThat(errors("limits:\n  - {name: r, mode: leased, lease_length: 2s, config: [{limit: 1000, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("lease_length 2s is longer than the rule's shortest period, 1s"));
    assertThat(errors("limits:\n  - {name: r, mode: leased, report_interval: 5ms, config: [{limit: 1000, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("report_interval must be between 10ms and 1m"));
    assertThat(errors("limits:\n  - {name: r, mode: leased, report_interval: 600ms, config: [{limit: 1000, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("lease_length must be between twice report_interval"));
    assertThat(errors("limits:\n  - {name: r, mode: leased, lease_slack: 20%, config: [{limit: 1000, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("lease_slack must be between 0.01% and 10%"));
    assertThat(errors("limits:\n  - {name: r, mode: leased, lease_slack: lots, config: [{limit: 1000, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("lease_slack must be a percentage such as 1%"));
    assertThat(errors("limits:\n  - {name: r, mode: leased, algorithm: leaky_bucket, config: [{limit: 1000, period: 1s}]}\n"))
        .anyMatch(e -> e.contains("a leaky_bucket cannot be leased") && e.contains("use token_bucket"));
    assertThat(errors("""
        limits:
          - name: r
            mode: leased
            audit: {keep: 5, attribute: user}
            config: [{limit: 1000, period: 1s}]
        """)).anyMatch(e -> e.contains("an audited rule cannot be leased"));
    assertThat(errors("""
        limits:
          - name: r
            mode: leased
            config: [{limit: 1000, period: 1s}]
            overrides:
              - {keys: ["vip"], config: [{limit: 100, period: 100ms}]}
        """)).anyMatch(e -> e.contains("lease_length PT1S is longer than the rule's shortest period, PT0.1S"));
  }

  @Test
  void aBudgetTooSmallForWholeUnitsIsAWarning() throws Exception {
    List<String> warnings = ConfigLoader.parse("limits:\n  - {name: r, mode: leased, config: [{limit: 500, period: 1s}]}\n",
        "t.yaml").warnings().stream().map(ConfigProblem::toString).toList();
    assertThat(warnings).anyMatch(w -> w.contains("leased with a budget of 5 units (1% of its smallest limit)"));
  }

  @Test
  void theBuilderRefusesWhatTheReaderRefuses() {
    assertThatThrownBy(() -> Rule.builder("r").algorithm(Algorithm.LEAKY_BUCKET).window(10, Duration.ofSeconds(1))
        .lease(LeasePolicy.DEFAULTS).build()).hasMessageContaining("a leaky_bucket cannot be leased");
    assertThatThrownBy(() -> Rule.builder("r").window(10, Duration.ofSeconds(1)).audit(new AuditPolicy(5, "user"))
        .lease(LeasePolicy.DEFAULTS).build()).hasMessageContaining("an audited rule cannot be leased");
    assertThatThrownBy(() -> Rule.builder("r").window(10, Duration.ofMillis(500)).lease(LeasePolicy.DEFAULTS).build())
        .hasMessageContaining("lease_length PT1S is longer than the rule's shortest period, PT0.5S");
    assertThatThrownBy(() -> new LeasePolicy(Duration.ofSeconds(1), Duration.ofMillis(100), 0))
        .hasMessageContaining("lease_slack must be between 0.01% and 10%, was 0.0%");
  }

  @Test
  void aStoreThatCannotLeaseRefusesALeasedRuleNeverDecidingItSomeOtherWay() {
    Rule leased = Rule.builder("r").window(1000, Duration.ofSeconds(1)).lease(LeasePolicy.DEFAULTS).build();
    // A store offering neither grants nor a lease board, as any store by default.
    dev.sluice.testing.FlakyStore plain = new dev.sluice.testing.FlakyStore(MemoryStore.builder().build());
    assertThatThrownBy(() -> Sluice.builder().rules(leased).store(plain).build())
        .isInstanceOf(UnsupportedRuleException.class).hasMessageContaining("cannot decide mode: leased")
        .hasMessageContaining("use mode: exact");
  }
}
