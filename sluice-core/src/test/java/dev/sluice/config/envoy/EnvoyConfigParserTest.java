package dev.sluice.config.envoy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.LeasePolicy;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.config.ConfigException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class EnvoyConfigParserTest {

  private static EnvoyDomain parse(String yaml) throws ConfigException {
    return EnvoyConfigParser.parse("envoy.yaml", yaml);
  }

  private static void assertError(String yaml, String where, String message) {
    assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("envoy.yaml:" + where + ": ").hasMessageContaining(message);
  }

  @Test
  void eachLimitedDescriptorBecomesAFixedWindowRuleNamedAfterItsPath() throws Exception {
    EnvoyDomain d = parse("""
        domain: messaging
        descriptors:
          - key: message_type
            value: marketing
            descriptors:
              - key: to_number
                rate_limit: {unit: day, requests_per_unit: 5}
          - key: to_number
            rate_limit: {unit: minute, requests_per_unit: 100}
        """);
    assertThat(d.rules()).extracting(Rule::name)
        .containsExactly("envoy:messaging/message_type:marketing/to_number", "envoy:messaging/to_number");
    Rule r = d.rules().get(0);
    assertThat(r.algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
    assertThat(r.windows()).containsExactly(new Window(5, Duration.ofDays(1)));
    assertThat(d.rules().get(1).windows()).containsExactly(new Window(100, Duration.ofMinutes(1)));
  }

  @Test
  void namesWithCharactersARuleNameCannotHoldGetAHashAndStayDistinct() throws Exception {
    EnvoyDomain d = parse("""
        domain: paths
        descriptors:
          - key: path
            value: "/foo/*"
            rate_limit: {unit: minute, requests_per_unit: 20}
          - key: path
            value: "/foo/?"
            rate_limit: {unit: minute, requests_per_unit: 20}
        """);
    String a = d.rules().get(0).name();
    String b = d.rules().get(1).name();
    assertThat(a).startsWith("envoy:paths/path:/foo/_-").isNotEqualTo(b);
    assertThat(b).startsWith("envoy:paths/path:/foo/_-");
    // The same path always gets the same name, so a reload keeps its state.
    assertThat(EnvoyRuleNames.of("paths/path:/foo/*")).isEqualTo(a);
  }

  @Test
  void veryLongPathsStillMakeValidDistinctNames() {
    String longValue = "v".repeat(300);
    String a = EnvoyRuleNames.of("d/k:" + longValue + "a");
    String b = EnvoyRuleNames.of("d/k:" + longValue + "b");
    assertThat(a).hasSizeLessThanOrEqualTo(128).isNotEqualTo(b);
    Rule.builder(a).window(1, Duration.ofSeconds(1)).build();
  }

  @Test
  void unitsAreReadInAnyCaseAndIncludeWeekMonthAndYear() throws Exception {
    EnvoyDomain d = parse("""
        domain: units
        descriptors:
          - {key: a, rate_limit: {unit: SECOND, requests_per_unit: 1}}
          - {key: b, rate_limit: {unit: Hour, requests_per_unit: 1}}
          - {key: c, rate_limit: {unit: week, requests_per_unit: 1}}
          - {key: e, rate_limit: {unit: month, requests_per_unit: 1}}
          - {key: f, rate_limit: {unit: year, requests_per_unit: 1}}
        """);
    assertThat(d.rules()).extracting(r -> r.windows().get(0).period()).containsExactly(Duration.ofSeconds(1),
        Duration.ofHours(1), Duration.ofDays(7), Duration.ofDays(30), Duration.ofDays(365));
  }

  @Test
  void theSluiceBlockGivesADescriptorSeveralWindowsAndAnAlgorithm() throws Exception {
    EnvoyDomain d = parse("""
        domain: auth
        descriptors:
          - key: user
            rate_limit:
              name: per_user
            sluice:
              algorithm: sliding_log
              failure_mode: closed
              windows:
                - {limit: 20, period: 1m}
                - {limit: 5, period: 3}
                - {limit: 2, period: 500ms}
        """);
    Rule r = d.rules().get(0);
    assertThat(r.algorithm()).isEqualTo(Algorithm.SLIDING_LOG);
    assertThat(r.failureMode()).isEqualTo(FailureMode.CLOSED);
    assertThat(r.windows()).containsExactly(new Window(20, Duration.ofMinutes(1)),
        new Window(5, Duration.ofSeconds(3)), new Window(2, Duration.ofMillis(500)));
  }

  @Test
  void periodsAndMaxWaitAreReadAsTheNativeFormatReadsThem() throws Exception {
    EnvoyDomain d = parse("""
        domain: auth
        descriptors:
          - key: user
            sluice:
              algorithm: leaky_bucket
              max_wait: 0.25
              windows:
                - {limit: 20, period: 1m30s}
                - {limit: 5, period: PT0.5S}
        """);
    Rule r = d.rules().get(0);
    assertThat(r.windows()).containsExactly(new Window(20, Duration.ofSeconds(90)),
        new Window(5, Duration.ofMillis(500)));
    assertThat(r.maxWait()).isEqualTo(Duration.ofMillis(250));
    assertError("""
        domain: d
        descriptors:
          - key: a
            sluice:
              windows: [{limit: 3, period: -1s}]
        """, "5:36", "period must be > 0, was '-1s'");
  }

  @Test
  void theSluiceBlockCanLeaseADescriptorsLimitAsTheNativeFormatDoes() throws Exception {
    EnvoyDomain d = parse("""
        domain: api
        descriptors:
          - key: generic_key
            value: global
            rate_limit: {unit: second, requests_per_unit: 50000}
            sluice: {algorithm: token_bucket, mode: leased}
          - key: tenant
            sluice:
              mode: leased
              lease_length: 500ms
              report_interval: 50ms
              lease_slack: 2%
              windows: [{limit: 20000, period: 1s}, {limit: 600000, period: 1m}]
        """);
    assertThat(d.rules().get(0).lease()).isEqualTo(LeasePolicy.DEFAULTS);
    assertThat(d.rules().get(0).algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
    assertThat(d.rules().get(1).lease())
        .isEqualTo(new LeasePolicy(Duration.ofMillis(500), Duration.ofMillis(50), 0.02));
    // Defaults follow the windows, as in the native format: a 200 ms window leases for 200 ms.
    EnvoyDomain shortWindow = parse("""
        domain: api
        descriptors:
          - key: k
            sluice: {mode: leased, lease_slack: 0.005, windows: [{limit: 10000, period: 200ms}]}
        """);
    assertThat(shortWindow.rules().get(0).lease())
        .isEqualTo(new LeasePolicy(Duration.ofMillis(200), Duration.ofMillis(100), 0.005));
    assertThat(parse("""
        domain: api
        descriptors:
          - key: k
            rate_limit: {unit: second, requests_per_unit: 10}
            sluice: {mode: exact}
        """).rules().get(0).lease()).isNull();
  }

  @Test
  void aLeaseTheStoreCouldNotKeepIsRefusedWhereItIsWritten() {
    String head = """
        domain: api
        descriptors:
          - key: k
        """;
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n    sluice: {mode: borrowed}\n",
        "5:20", "mode must be exact or leased, was 'borrowed'");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n    sluice: {lease_slack: 1%}\n",
        "5:27", "lease_slack applies only to mode: leased");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n"
        + "    sluice: {mode: leased, algorithm: leaky_bucket}\n", "5:13", "a leaky_bucket cannot be leased");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n"
        + "    sluice: {mode: leased, lease_length: 2s}\n", "5:42", "lease_length PT2S is longer than the rule's shortest period, PT1S");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n"
        + "    sluice: {mode: leased, report_interval: 1ms}\n", "5:45", "report_interval must be between 10ms and 1m");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n"
        + "    sluice: {mode: leased, lease_slack: lots}\n", "5:41", "lease_slack must be a percentage");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 10}\n"
        + "    sluice: {mode: leased, lease_slack: 50%}\n", "5:41", "lease_slack must be between 0.01% and 10%");
    assertError(head + "    rate_limit: {unlimited: true}\n    sluice: {mode: leased}\n",
        "5:20", "mode: leased needs a limit to lease; this descriptor's rate_limit is unlimited");
    assertError(head + "    rate_limit: {unit: second, requests_per_unit: 0}\n    sluice: {mode: leased}\n",
        "5:20", "is 0");
  }

  @Test
  void theSluiceBlockCanChangeTheAlgorithmOfAnEnvoyRateLimit() throws Exception {
    EnvoyDomain d = parse("""
        domain: auth
        descriptors:
          - key: user
            rate_limit: {unit: second, requests_per_unit: 10}
            sluice: {algorithm: token_bucket}
        """);
    assertThat(d.rules().get(0).algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
    assertThat(d.rules().get(0).windows()).containsExactly(new Window(10, Duration.ofSeconds(1)));
  }

  @Test
  void unknownFieldsAreErrorsNamingLineAndColumn() {
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit:
              unit: second
              request_per_unit: 5
        """, "6:7", "unknown field 'request_per_unit' in rate_limit");
    assertError("""
        domain: d
        descriptor:
          - key: a
        """, "2:1", "unknown field 'descriptor'");
    assertError("""
        domain: d
        descriptors:
          - key: a
            sluice:
              windows:
                - {limit: 1, period: 1s, burst: 2}
        """, "6:34", "unknown field 'burst' in a window");
  }

  @Test
  void envoysOwnValidationRulesAreErrorsWithTheirPlace() {
    assertError("descriptors: []\n", "1:1", "empty domain");
    assertError("""
        domain: d
        descriptors:
          - value: x
        """, "3:5", "descriptor has an empty key");
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit: {unit: fortnight, requests_per_unit: 1}
        """, "4:24", "invalid rate limit unit 'fortnight'");
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit: {unlimited: true, unit: second}
        """, "4:41", "should not specify rate limit unit when unlimited");
    assertError("""
        domain: d
        descriptors:
          - key: a
            value: b
          - key: a
            value: b
        """, "5:5", "duplicate descriptor composite key 'd/a:b'");
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit:
              unit: second
              requests_per_unit: 1
              name: me
              replaces: [{name: me}]
        """, "8:18", "replaces should not contain the name of its own rate limit");
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit: {unit: second, requests_per_unit: -1}
        """, "4:51", "requests_per_unit must be an integer between 0 and 4294967295");
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit: {unit: second, requests_per_unit: "5"}
        """, "4:51", "requests_per_unit must be an integer");
    assertError("""
        domain: d
        descriptors:
          - key: a
            shadow_mode: "yes"
        """, "4:18", "shadow_mode must be true or false");
  }

  @Test
  void extensionMistakesAreErrorsWithTheirPlace() {
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit: {unit: second, requests_per_unit: 5}
            sluice:
              windows: [{limit: 1, period: 1s}]
        """, "4:24", "rate_limit may then hold only name and replaces");
    assertError("""
        domain: d
        descriptors:
          - key: a
            sluice: {algorithm: sliding_log}
        """, "4:13", "a sluice block needs windows, or a rate_limit beside it");
    assertError("""
        domain: d
        descriptors:
          - key: a
            sluice:
              algorithm: magic
              windows: [{limit: 1, period: 1s}]
        """, "5:7", "unknown algorithm 'magic'");
    assertError("""
        domain: d
        descriptors:
          - key: a
            sluice:
              windows: [{limit: 0, period: 1s}]
        """, "5:25", "limit must be >= 1");
    assertError("""
        domain: d
        descriptors:
          - key: a
            sluice:
              windows: [{limit: 3, period: soon}]
        """, "5:36", "period 'soon' is not a duration; expected a number of seconds");
  }

  /** The YAML parser reports an alias as a string holding the anchor's name: "a mapping, was 'rl'". */
  @Test
  void anAliasIsRefusedSayingSoRatherThanReadAsItsAnchorsName() {
    assertError("""
        domain: d
        descriptors:
          - key: a
            rate_limit: &rl {unit: second, requests_per_unit: 5}
          - key: b
            rate_limit: *rl
        """, "6:17", "YAML aliases (*rl) are not supported; write the value out");
  }

  @Test
  void aRepeatedKeyIsAnErrorNamingBothPlaces() {
    assertError("""
        domain: d
        descriptors:
          - key: a
            key: b
        """, "4:5", "duplicate field 'key' (first at line 3, column 5)");
  }

  @Test
  void invalidYamlIsAnErrorWithItsPlace() {
    assertThatThrownBy(() -> parse("domain: d\ndescriptors:\n  - key: [unclosed\n"))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("envoy.yaml:")
        .hasMessageContaining("not valid YAML");
  }
}
