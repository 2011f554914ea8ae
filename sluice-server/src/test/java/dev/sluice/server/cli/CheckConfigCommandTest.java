package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.example;
import static dev.sluice.server.cli.Cli.run;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckConfigCommandTest {
  static final String SPEC_EXAMPLE = """
      limits:
        - name: auth.createToken
          config:
            - limit: 20
              period: 60
            - limit: 5
              period: 3
        - name: service.actionName
          config:
            - limit: 600
              period: 600
            - limit: 30
              period: 20
      """;

  @TempDir
  Path dir;

  private String write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text).toString();
  }

  @Test
  void specExampleIsCleanAndExitsZero() throws IOException {
    Run r = run("check-config", write("spec.yaml", SPEC_EXAMPLE));
    assertThat(r.exit()).isZero();
    assertThat(r.outLines()).containsExactly("ok: 2 rules in 1 file");
    assertThat(r.err()).isEmpty();
  }

  @Test
  void shippedExampleConfigurationIsClean() {
    Run r = run("check-config", example("limits.yaml"));
    assertThat(r.exit()).isZero();
    assertThat(r.outLines()).containsExactly("ok: 7 rules in 1 file");
  }

  @Test
  void aWindowThatCanNeverBindExitsOneWithAWarningNamingIt() {
    Run r = run("check-config", example("lint.yaml"));
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.outLines()).containsExactly(
        example("lint.yaml") + ":6:9: warning: rule 'service.actionName': window 1 (600/600s) can never bind: "
            + "window 2 (10/10s) already caps any 600s at 10 × ⌈600s/10s⌉ = 600, within its limit of 600",
        "1 warning: 1 rule in 1 file");
  }

  @Test
  void unknownFieldExitsTwoNamingFileLineAndColumn() throws IOException {
    String f = write("a.yaml", "limits:\n  - name: a\n    config:\n      - limit: 20\n        perod: 60\n");
    Run r = run("check-config", f);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(
        f + ":5:9: unknown field 'perod' (expected one of: limit, period)",
        "1 error, 0 warnings");
  }

  @Test
  void negativeLimitExitsTwoNamingFileLineAndColumn() throws IOException {
    String f = write("a.yaml", "limits:\n  - name: a\n    config:\n      - limit: -1\n        period: 60\n");
    Run r = run("check-config", f);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(f + ":4:16: limit must be ≥ 1, found -1", "1 error, 0 warnings");
  }

  @Test
  void duplicateRuleNameExitsTwoNamingFileLineAndColumn() throws IOException {
    String f = write("a.yaml", "limits:\n  - name: a\n    config: [{limit: 1, period: 1}]\n"
        + "  - name: a\n    config: [{limit: 2, period: 1}]\n");
    Run r = run("check-config", f);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(
        f + ":4:11: duplicate rule name 'a' (first defined at line 2, column 11)", "1 error, 0 warnings");
  }

  @Test
  void shippedBadExampleListsEveryProblem() {
    Run r = run("check-config", example("bad.yaml"));
    String f = example("bad.yaml");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(
        f + ":7:9: unknown field 'limt' (expected one of: limit, period)",
        f + ":11:16: limit must be ≥ 1, found -5",
        f + ":13:11: duplicate rule name 'auth.createToken' (first defined at line 3, column 11)",
        f + ":15:5: max_wait applies only to leaky_bucket rules; rule 'auth.createToken' uses token_bucket",
        f + ":18:17: period must be > 0, found 0",
        "5 errors, 0 warnings");
  }

  @Test
  void severalPathsAreCheckedSeparatelyAndTheWorstOutcomeWins() throws IOException {
    Run r = run("check-config", example("limits.yaml"), example("lint.yaml"));
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.outLines()).last().isEqualTo("1 warning: 8 rules in 2 files");

    String bad = write("bad.yaml", "limits: 3\n");
    r = run("check-config", example("lint.yaml"), bad);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).contains(bad + ":1:9: 'limits' must be a list of rules, found the number 3")
        .last().isEqualTo("1 error, 1 warning");
  }

  @Test
  void directoryIsOneConfigurationAcrossItsFiles() throws IOException {
    Path conf = Files.createDirectory(dir.resolve("conf.d"));
    Files.writeString(conf.resolve("a.yaml"), "limits:\n  - name: x\n    config: [{limit: 1, period: 1}]\n");
    Files.writeString(conf.resolve("b.yml"), "limits:\n  - name: x\n    config: [{limit: 2, period: 1}]\n");
    Run r = run("check-config", conf.toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(conf.resolve("b.yml") + ":2:11: duplicate rule name 'x' (first defined at "
        + conf.resolve("a.yaml") + ":2:11)", "1 error, 0 warnings");
  }

  @Test
  void missingFileExitsTwo() {
    Run r = run("check-config", dir.resolve("nope.yaml").toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(dir.resolve("nope.yaml") + ": no such file or directory",
        "1 error, 0 warnings");
  }

  @Test
  void noPathIsAUsageErrorWithoutStackTrace() {
    Run r = run("check-config");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("Missing required parameter: 'PATH'").doesNotContain("Exception");
  }

  @Test
  void noCommandPrintsUsage() {
    Run r = run();
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("missing command").contains("check-config").contains("replay");
  }

  @Test
  void tiersAreCountedAndAListEntryBothListsMatchIsAWarning() throws IOException {
    String file = write("policies.yaml", """
        tiers:
          free: [{limit: 10, period: 1m}]
          premium: [{limit: 100, period: 1m}]
        limits:
          - name: per_ip
            config: [{limit: 30, period: 1m}]
            ban: {after: 5, within: 1m, for: 15m}
            allow: ["ip:10.0.0.0/8"]
            deny: ["ip:10.1.0.0/16"]
        """);
    Run r = run("check-config", file);
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.outLines()).containsExactly(file + ":9:12: warning: rule 'per_ip': deny entry 'ip:10.1.0.0/16' is "
        + "also allowed (the allow list matches every key it matches); the deny list is checked first, so those keys "
        + "are denied", "1 warning: 1 rule, 2 tiers in 1 file");
  }

  @Test
  void aBadListEntryIsAnErrorAtItsPlace() throws IOException {
    String file = write("bad.yaml", """
        limits:
          - name: per_ip
            config: [{limit: 30, period: 1m}]
            deny:
              - "ip:2001:db8::/129"
        """);
    Run r = run("check-config", file);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.outLines()).containsExactly(file + ":5:9: deny entry 1: CIDR prefix /129 is longer than 128 bits "
        + "for IPv6 (entry 'ip:2001:db8::/129')", "1 error, 0 warnings");
  }
}
