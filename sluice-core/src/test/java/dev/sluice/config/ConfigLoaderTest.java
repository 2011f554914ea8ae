package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.Window;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

  static LoadedConfig parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(yaml, "t.yaml");
  }

  /** The problems of a configuration that must not load, as file:line:col: message. */
  static List<String> errors(String yaml) {
    try {
      parse(yaml);
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigProblem::toString).toList();
    }
    throw new AssertionError("expected the configuration to be rejected:\n" + yaml);
  }

  @Test
  void specExampleLoadsExactlyAsWritten() throws Exception {
    Path file = Path.of(getClass().getResource("/config/spec-example.yaml").toURI());
    LoadedConfig c = ConfigLoader.load(file);

    assertThat(c.warnings()).isEmpty();
    assertThat(c.rules().rules()).extracting(Rule::name).containsExactly("auth.createToken", "service.actionName");
    Rule token = c.rules().get("auth.createToken");
    assertThat(token.windows()).containsExactly(Window.perSeconds(20, 60), Window.perSeconds(5, 3));
    assertThat(token.algorithm()).isEqualTo(Algorithm.SLIDING_LOG);
    assertThat(token.shadow()).isFalse();
    assertThat(token.failureMode()).isEqualTo(FailureMode.OPEN);
    assertThat(token.overrides()).isEmpty();
    assertThat(c.rules().get("service.actionName").windows())
        .containsExactly(Window.perSeconds(600, 600), Window.perSeconds(30, 20));
    assertThat(c.origin("auth.createToken")).isEqualTo(new ConfigLocation(file.toString(), 2, 11));
    assertThat(c.origin("service.actionName")).isEqualTo(new ConfigLocation(file.toString(), 8, 11));
  }

  @Test
  void everyOptionalRuleFieldIsRead() throws Exception {
    LoadedConfig c = parse("""
        limits:
          - name: api
            algorithm: token_bucket
            shadow: true
            failure_mode: closed
            config:
              - limit: 100
                period: 1m
            overrides:
              - keys: [tenant:acme:*, user:1]
                config:
                  - limit: 1000
                    period: 1m
          - name: smooth
            algorithm: leaky_bucket
            max_wait: 250ms
            failure_mode: local
            config:
              - limit: 10
                period: 1s
          - name: approx
            algorithm: sliding_window
            precision: 60
            config:
              - limit: 5000
                period: 1h
          - name: daily
            algorithm: fixed_window
            config:
              - limit: 1000
                period: 1d
        """);
    Rule api = c.rules().get("api");
    assertThat(api.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
    assertThat(api.shadow()).isTrue();
    assertThat(api.failureMode()).isEqualTo(FailureMode.CLOSED);
    assertThat(api.overrides()).containsExactly(
        new KeyOverride(List.of("tenant:acme:*", "user:1"), List.of(Window.perSeconds(1000, 60))));
    assertThat(api.windowsFor("tenant:acme:42")).containsExactly(Window.perSeconds(1000, 60));
    assertThat(api.windowsFor("user:1")).containsExactly(Window.perSeconds(1000, 60));
    assertThat(api.windowsFor("user:12")).containsExactly(Window.perSeconds(100, 60));

    Rule smooth = c.rules().get("smooth");
    assertThat(smooth.algorithm()).isEqualTo(Algorithm.LEAKY_BUCKET);
    assertThat(smooth.maxWait()).isEqualTo(Duration.ofMillis(250));
    assertThat(smooth.hasExplicitMaxWait()).isTrue();
    assertThat(smooth.failureMode()).isEqualTo(FailureMode.LOCAL);

    Rule approx = c.rules().get("approx");
    assertThat(approx.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW);
    assertThat(approx.precision()).isEqualTo(60);
    assertThat(approx.windows()).containsExactly(Window.of(5000, Duration.ofHours(1)));

    assertThat(c.rules().get("daily").windows()).containsExactly(Window.of(1000, Duration.ofDays(1)));
    assertThat(c.warnings()).isEmpty();
  }

  @Test
  void leakyBucketWithoutMaxWaitWaitsAtMostItsLongestPeriod() throws Exception {
    Rule r = parse("""
        limits:
          - name: smooth
            algorithm: leaky_bucket
            config:
              - {limit: 10, period: 1s}
              - {limit: 100, period: 20s}
        """).rules().get("smooth");
    assertThat(r.hasExplicitMaxWait()).isFalse();
    assertThat(r.maxWait()).isEqualTo(Duration.ofSeconds(20));
  }

  @Test
  void maxWaitMayBeZero() throws Exception {
    Rule r = parse("""
        limits:
          - name: police
            algorithm: leaky_bucket
            max_wait: 0
            config: [{limit: 10, period: 1s}]
        """).rules().get("police");
    assertThat(r.maxWait()).isZero();
  }

  @Test
  void emptyLimitsListIsAConfigurationWithoutRules() throws Exception {
    assertThat(parse("limits: []\n").rules().size()).isZero();
  }

  @Test
  void unknownFieldsAreErrorsEverywhereNamingTheExpectedOnes() {
    assertThat(errors("""
        limits:
          - name: a
            config:
              - limit: 20
                period: 60
              - period: 3
                limt: 5
        """)).containsExactly("t.yaml:7:9: unknown field 'limt' (expected one of: limit, period)");
    // A missing field is reported on its own only when no unknown field looks like its misspelling.
    assertThat(errors("""
        limits:
          - name: a
            config:
              - period: 3
                colour: red
        """)).containsExactly(
        "t.yaml:4:9: window has no 'limit'",
        "t.yaml:5:9: unknown field 'colour' (expected one of: limit, period)");
    assertThat(errors("""
        limits:
          - name: a
            algoritm: token_bucket
            config: [{limit: 1, period: 1}]
        """)).containsExactly("t.yaml:3:5: unknown field 'algoritm' (expected one of: name, algorithm, config, "
        + "precision, max_wait, overrides, shadow, failure_mode, ban, audit, allow, deny, mode, lease_length, report_interval, lease_slack)");
    assertThat(errors("""
        version: 2
        limits: []
        """)).containsExactly("t.yaml:1:1: unknown field 'version' (expected one of: limits, operations, attributes, tiers)");
    assertThat(errors("""
        limits:
          - name: a
            config: [{limit: 1, period: 1}]
            overrides:
              - keys: [vip]
                windows: [{limit: 2, period: 1}]
        """)).containsExactly(
        "t.yaml:5:9: override has no 'config' (its list of windows)",
        "t.yaml:6:9: unknown field 'windows' (expected one of: keys, config)");
  }

  @Test
  void duplicateRuleNamesAreErrorsNamingTheFirst() {
    assertThat(errors("""
        limits:
          - name: login
            config: [{limit: 1, period: 1}]
          - name: login
            config: [{limit: 2, period: 1}]
        """)).containsExactly("t.yaml:4:11: duplicate rule name 'login' (first defined at line 2, column 11)");
  }

  @Test
  void limitsMustBeWholeNumbersOfAtLeastOne() {
    assertThat(errors("""
        limits:
          - name: a
            config:
              - {limit: 0, period: 1}
              - {limit: -5, period: 1}
              - {limit: 1.5, period: 1}
              - {limit: "20", period: 1}
              - {limit: , period: 1}
              - {limit: 1000000000000000000000, period: 1}
        """)).containsExactly(
        "t.yaml:4:17: limit must be ≥ 1, found 0",
        "t.yaml:5:17: limit must be ≥ 1, found -5",
        "t.yaml:6:17: limit must be a whole number ≥ 1, found the number 1.5",
        "t.yaml:7:17: limit must be a whole number ≥ 1, found the string \"20\"",
        "t.yaml:8:16: limit must be a whole number ≥ 1, found empty",
        "t.yaml:9:17: limit 1000000000000000000000 is too large; the maximum is 1000000000000000");
  }

  @Test
  void integersMustBeWrittenInDecimal() throws Exception {
    assertThat(errors("""
        limits:
          - name: a
            config:
              - {limit: 020, period: 1}
              - {limit: 0x10, period: 1}
              - {limit: 1, period: 010}
        """)).containsExactly(
        "t.yaml:4:17: limit must be written in decimal digits, found 020 (YAML would read it as 16)",
        "t.yaml:5:17: limit must be written in decimal digits, found 0x10 (YAML would read it as 16)",
        "t.yaml:6:28: period must be written in decimal digits, found 010 (YAML would read it as 8)");
    assertThat(parse("limits:\n  - name: a\n    config: [{limit: 1_000, period: +5}]\n").rules().get("a").windows())
        .containsExactly(Window.perSeconds(1000, 5));
  }

  @Test
  void slidingLogLimitsAreBoundedByItsLogButOtherAlgorithmsAreNot() throws Exception {
    assertThat(errors("""
        limits:
          - name: a
            config: [{limit: 3000000000, period: 1d}]
        """)).singleElement().asString().startsWith("t.yaml:3:22: limit 3000000000 is too large for sliding_log");
    assertThat(parse("""
        limits:
          - name: a
            algorithm: token_bucket
            config: [{limit: 3000000000, period: 1d}]
        """).rules().get("a").windows().get(0).limit()).isEqualTo(3_000_000_000L);
  }

  @Test
  void periodsMustBePositive() {
    assertThat(errors("""
        limits:
          - name: a
            config:
              - limit: 1
                period: 0
              - limit: 1
                period: -3
              - limit: 1
                period: -3s
              - limit: 1
                period: 0ms
        """)).containsExactly(
        "t.yaml:5:17: period must be > 0, found 0",
        "t.yaml:7:17: period must be > 0, found -3",
        "t.yaml:9:17: period must be > 0, found -3s",
        "t.yaml:11:17: period must be > 0, found 0ms");
  }

  @Test
  void periodTypeErrorsSayWhatIsAccepted() {
    assertThat(errors("""
        limits:
          - name: a
            config:
              - {limit: 1, period: true}
              - {limit: 1, period: [1]}
              - {limit: 1, period: 3x}
              - {limit: 1, period: .inf}
        """)).containsExactly(
        "t.yaml:4:28: period must be " + Durations.SYNTAX + ", found the boolean true",
        "t.yaml:5:28: period must be " + Durations.SYNTAX + ", found a list",
        "t.yaml:6:28: period '3x' is not a duration; expected " + Durations.SYNTAX,
        "t.yaml:7:28: period must be finite, found .inf");
  }

  @Test
  void missingNameOrConfigAndEmptyConfigAreErrors() {
    assertThat(errors("""
        limits:
          - config: [{limit: 1, period: 1}]
          - name: b
          - name: c
            config: []
          - name: d
            config: {limit: 1, period: 1}
        """)).containsExactly(
        "t.yaml:2:5: rule 1 has no 'name'",
        "t.yaml:3:5: rule 'b' has no 'config' (its list of windows, each with limit and period)",
        "t.yaml:5:13: 'config' must have at least one window",
        "t.yaml:7:13: 'config' must be a list of windows, each with limit and period, found a mapping");
  }

  @Test
  void maxWaitAndPrecisionBelongToTheirAlgorithmsOnly() {
    assertThat(errors("""
        limits:
          - name: a
            max_wait: 1s
            config: [{limit: 1, period: 1}]
          - name: b
            algorithm: token_bucket
            precision: 20
            config: [{limit: 1, period: 1}]
          - name: c
            algorithm: sliding_window
            precision: 0
            config: [{limit: 1, period: 1}]
          - name: d
            algorithm: leaky_bucket
            max_wait: -1s
            config: [{limit: 1, period: 1}]
        """)).containsExactly(
        "t.yaml:3:5: max_wait applies only to leaky_bucket rules; rule 'a' uses sliding_log",
        "t.yaml:7:5: precision applies only to sliding_window rules; rule 'b' uses token_bucket",
        "t.yaml:11:16: precision must be from 1 to 1000, found 0",
        "t.yaml:15:15: max_wait must be ≥ 0, found -1s");
  }

  @Test
  void enumAndBooleanTypeErrorsNameTheAcceptedValues() {
    assertThat(errors("""
        limits:
          - name: a
            algorithm: sliding-log
            shadow: "yes please"
            failure_mode: ajar
            config: [{limit: 1, period: 1}]
          - name: 42
            config: [{limit: 1, period: 1}]
          - name: "bad name!"
            config: [{limit: 1, period: 1}]
        """)).containsExactly(
        "t.yaml:3:16: unknown algorithm 'sliding-log' (expected one of: sliding_log, sliding_window, fixed_window, "
            + "token_bucket, leaky_bucket)",
        "t.yaml:4:13: shadow must be true or false, found the string \"yes please\"",
        "t.yaml:5:19: unknown failure_mode 'ajar' (expected one of: open, closed, local)",
        "t.yaml:7:11: name must be a string, found the number 42 (quote it: \"42\")",
        "t.yaml:9:11: rule name must be 1-128 characters of letters, digits and _ . : / -, was 'bad name!'");
  }

  @Test
  void overrideKeyPatternsAreKeysOrPrefixesEndingInAStar() {
    assertThat(errors("""
        limits:
          - name: a
            config: [{limit: 1, period: 1}]
            overrides:
              - keys: ["*", "", "a*b", 7]
                config: [{limit: 2, period: 1}]
              - keys: []
                config: [{limit: 2, period: 1}]
              - keys: vip
                config: [{limit: 2, period: 1}]
        """)).containsExactly(
        "t.yaml:5:16: key pattern '*' matches every key; give a key or a prefix followed by '*' (user:*)",
        "t.yaml:5:21: key pattern '' matches nothing; give a key or a prefix followed by '*' (user:*)",
        "t.yaml:5:25: key pattern 'a*b' has a '*' before its end; a pattern is a key, or a prefix followed by one "
            + "'*' at the end",
        "t.yaml:5:32: a key pattern must be a string, found the number 7 (quote it: \"7\")",
        "t.yaml:7:15: keys must list at least one key or prefix",
        "t.yaml:9:15: keys must be a list of keys or prefixes ending in '*', found the string \"vip\"");
  }

  @Test
  void overrideWindowsAreValidatedLikeRuleWindows() {
    assertThat(errors("""
        limits:
          - name: a
            config: [{limit: 1, period: 1}]
            overrides:
              - keys: [vip]
                config:
                  - limit: 0
                    period: 1
        """)).containsExactly("t.yaml:7:20: limit must be ≥ 1, found 0");
  }

  @Test
  void everyProblemIsReportedNotJustTheFirst() {
    assertThat(errors("""
        limits:
          - name: a
            config: [{limit: 0, period: 1}]
          - name: b
            config: [{limit: 1, period: 0}]
          - name: a
            colour: red
            config: [{limit: 1, period: 1}]
        """)).containsExactly(
        "t.yaml:3:22: limit must be ≥ 1, found 0",
        "t.yaml:5:33: period must be > 0, found 0",
        "t.yaml:6:11: duplicate rule name 'a' (first defined at line 2, column 11)",
        "t.yaml:7:5: unknown field 'colour' (expected one of: name, algorithm, config, precision, max_wait, "
            + "overrides, shadow, failure_mode, ban, audit, allow, deny, mode, lease_length, report_interval, lease_slack)");
  }

  @Test
  void oneBadRuleLoadsNothing() {
    assertThatThrownBy(() -> parse("""
        limits:
          - name: good
            config: [{limit: 1, period: 1}]
          - name: bad
            config: [{limit: 1, period: nope}]
        """)).isInstanceOf(ConfigException.class)
        .hasMessage("t.yaml:5:33: period 'nope' is not a duration; expected " + Durations.SYNTAX);
  }

  @Test
  void duplicateKeysInAMappingAreErrors() {
    assertThat(errors("""
        limits:
          - name: a
            config:
              - limit: 1
                period: 1
                limit: 2
        """)).containsExactly("t.yaml:6:9: duplicate field 'limit' (first at line 4, column 9)");
  }

  @Test
  void malformedYamlIsReportedWhereSnakeYamlFindsIt() {
    assertThat(errors("""
        limits:
          - name: a
           config: x
        """)).containsExactly("t.yaml:3:4: not valid YAML: while parsing a block collection: expected <block end>, "
        + "but found '<block mapping start>'");
    assertThat(errors("limits:\n\t- name: a\n")).singleElement().asString()
        .startsWith("t.yaml:2:1: not valid YAML: ").contains("TAB");
  }

  @Test
  void structuralMistakesAreErrors() {
    assertThat(errors("")).containsExactly("t.yaml:1:1: the file is empty; expected a 'limits' list of rules");
    assertThat(errors("# only a comment\n"))
        .containsExactly("t.yaml:1:1: the file is empty; expected a 'limits' list of rules");
    assertThat(errors("- a\n")).containsExactly("t.yaml:1:1: expected a mapping with a 'limits' list, found a list");
    assertThat(errors("limits: 3\n")).containsExactly("t.yaml:1:9: 'limits' must be a list of rules, found the number 3");
    assertThat(errors("limits:\n  - just a string\n"))
        .containsExactly("t.yaml:2:5: rule 1 must be a mapping with 'name' and 'config', found the string \"just a string\"");
    assertThat(errors("limits: []\n---\nlimits: []\n"))
        .containsExactly("t.yaml:3:1: a file may hold only one YAML document; found a second one ('---')");
    // One error per place: the missing list is not reported on top of the unknown field.
    assertThat(errors("other: 1\n")).containsExactly("t.yaml:1:1: unknown field 'other' (expected one of: limits, operations, attributes, tiers)");
    assertThat(errors("{}\n")).containsExactly("t.yaml:1:1: missing 'limits' (the list of rules)");
  }

  @Test
  void aliasesAreRejectedRatherThanMisread() {
    assertThat(errors("""
        limits:
          - name: a
            config: &w [{limit: 1, period: 1}]
          - name: b
            config: *w
        """)).containsExactly("t.yaml:5:13: YAML aliases (*w) are not supported; write the value out");
  }

  @Test
  void envoyFilesAreRecognisedAndReferredToTheService() {
    assertThat(errors("domain: edge\ndescriptors: []\n")).containsExactly(
        "t.yaml:1:1: a top-level 'domain' marks an Envoy rate limit configuration, which the sluice service reads; "
            + "this loader reads the native format (a top-level 'limits' list)");
  }

  @Test
  void topLevelKeysTellFormatsApart(@TempDir Path dir) throws Exception {
    assertThat(ConfigLoader.topLevelKeys("limits: []\n", "a")).containsExactly("limits");
    assertThat(ConfigLoader.topLevelKeys("domain: x\ndescriptors:\n  - key: a\n", "b"))
        .containsExactly("domain", "descriptors");
    assertThat(ConfigLoader.topLevelKeys("- 1\n", "c")).isEmpty();
    assertThat(ConfigLoader.topLevelKeys("", "d")).isEmpty();
    assertThatThrownBy(() -> ConfigLoader.topLevelKeys("a: [\n", "e.yaml"))
        .isInstanceOf(ConfigException.class).hasMessageStartingWith("e.yaml:2:1: not valid YAML");

    Path nativeFile = Files.writeString(dir.resolve("n.yaml"), "limits: []\n");
    Path envoyFile = Files.writeString(dir.resolve("e.yaml"), "domain: x\n");
    assertThat(ConfigLoader.isNative(nativeFile)).isTrue();
    assertThat(ConfigLoader.isNative(envoyFile)).isFalse();
  }

  @Test
  void aByteOrderMarkIsIgnored() throws Exception {
    assertThat(parse("\uFEFFlimits: []\n").rules().size()).isZero();
  }

  @Test
  void directoryLoadsItsYamlFilesInNameOrder(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("b.yml"), "limits:\n  - name: second\n    config: [{limit: 2, period: 1}]\n");
    Files.writeString(dir.resolve("a.yaml"), "limits:\n  - name: first\n    config: [{limit: 1, period: 1}]\n");
    Files.writeString(dir.resolve("c.yaml"), "limits:\n  - name: third\n    config:\n      - {limit: 1, period: 1}\n"
        + "      - {limit: 1, period: 1}\n");
    Files.writeString(dir.resolve("notes.txt"), "not yaml: [");
    Files.writeString(dir.resolve(".hidden.yaml"), "not yaml: [");
    Files.createDirectory(dir.resolve("sub.yaml"));

    LoadedConfig c = ConfigLoader.load(dir);
    assertThat(c.rules().rules()).extracting(Rule::name).containsExactly("first", "second", "third");
    assertThat(c.origin("second")).isEqualTo(new ConfigLocation(dir.resolve("b.yml").toString(), 2, 11));
    assertThat(c.warnings()).extracting(ConfigProblem::toString)
        .containsExactly(dir.resolve("c.yaml") + ":5:9: rule 'third': window 2 (1/1s) duplicates window 1");
    assertThat(ConfigLoader.files(dir)).extracting(p -> p.getFileName().toString())
        .containsExactly("a.yaml", "b.yml", "c.yaml");
  }

  @Test
  void directoryReportsTheProblemsOfEveryFileAndDuplicatesAcrossFiles(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("1.yaml"), "limits:\n  - name: login\n    config: [{limit: 1, period: 1}]\n");
    Files.writeString(dir.resolve("2.yaml"), "limits:\n  - name: login\n    config: [{limit: 2, period: 1}]\n");
    Files.writeString(dir.resolve("3.yaml"), "limits:\n  - name: x\n    config: [{limit: 0, period: 1}]\n");
    Files.writeString(dir.resolve("4.yaml"), "limits:\n  - name: y\n    config: [{limit: 1, period: 0}]\n");

    assertThatThrownBy(() -> ConfigLoader.load(dir)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).extracting(ConfigProblem::toString).containsExactly(
            dir.resolve("3.yaml") + ":3:22: limit must be ≥ 1, found 0",
            dir.resolve("4.yaml") + ":3:33: period must be > 0, found 0"));

    Files.delete(dir.resolve("3.yaml"));
    Files.delete(dir.resolve("4.yaml"));
    assertThatThrownBy(() -> ConfigLoader.load(dir)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).extracting(ConfigProblem::toString).containsExactly(
            dir.resolve("2.yaml") + ":2:11: duplicate rule name 'login' (first defined at " + dir.resolve("1.yaml")
                + ":2:11)"));
  }

  @Test
  void missingPathsEmptyDirectoriesAndBadEncodingAreErrors(@TempDir Path dir) throws IOException {
    assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("nope.yaml")))
        .hasMessage(dir.resolve("nope.yaml") + ": no such file or directory");
    assertThatThrownBy(() -> ConfigLoader.load(dir))
        .hasMessage(dir + ": the directory holds no *.yaml or *.yml file");
    Path latin1 = Files.write(dir.resolve("l.yaml"), new byte[] {'l', 'i', 'm', 'i', 't', 's', ':', ' ', (byte) 0xE9});
    assertThatThrownBy(() -> ConfigLoader.load(latin1)).hasMessage(latin1 + ": not valid UTF-8");
  }

  @Test
  void lintWarningsPointAtTheWindowThatCanNeverBind() throws Exception {
    LoadedConfig c = parse("""
        limits:
          - name: service.actionName
            config:
              - limit: 600
                period: 600
              - limit: 10
                period: 10
        """);
    assertThat(c.rules().get("service.actionName").windows()).hasSize(2);
    assertThat(c.warnings()).extracting(ConfigProblem::toString).containsExactly(
        "t.yaml:4:9: rule 'service.actionName': window 1 (600/600s) can never bind: window 2 (10/10s) already caps "
            + "any 600s at 10 × ⌈600s/10s⌉ = 600, within its limit of 600");
  }

  @Test
  void lintCoversOverrideWindowsAndShadowedOverridePatterns() throws Exception {
    LoadedConfig c = parse("""
        limits:
          - name: a
            config: [{limit: 1, period: 1}]
            overrides:
              - keys: [tenant:*]
                config:
                  - {limit: 100, period: 1m}
                  - {limit: 100, period: 1m}
              - keys: [tenant:acme, user:1, user:1]
                config: [{limit: 5, period: 1}]
        """);
    assertThat(c.warnings()).extracting(ConfigProblem::toString).containsExactly(
        "t.yaml:8:13: rule 'a', override 1: window 2 (100/60s) duplicates window 1",
        "t.yaml:9:16: rule 'a', override 2: key pattern 'tenant:acme' never applies: override 1 ('tenant:*') "
            + "matches every key it matches, and the first matching override wins",
        "t.yaml:9:37: rule 'a', override 2: key pattern 'user:1' never applies: 'user:1' earlier in the same "
            + "override matches every key it matches");
  }
}
