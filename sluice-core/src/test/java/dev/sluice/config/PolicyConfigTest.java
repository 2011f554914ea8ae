package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.policy.ListKind;
import dev.sluice.Window;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tiers, and each rule's ban, audit and access lists, in the native configuration. */
class PolicyConfigTest {
  @TempDir
  Path dir;

  static List<String> errors(String yaml) {
    return OperationsConfigTest.errors(yaml);
  }

  static List<String> warnings(String yaml) throws ConfigException {
    return ConfigLoader.parse(yaml, "t.yaml").warnings().stream().map(ConfigProblem::toString).toList();
  }

  /** A rule named r with {@code extra} (indented as a rule's field) after its windows. */
  static String rule(String extra) {
    return "limits:\n  - name: r\n    config: [{limit: 10, period: 60}]\n" + extra;
  }

  // ---- tiers

  @Test
  void tiersLoadIntoTheRuleSetInOrder() throws Exception {
    LoadedConfig c = ConfigLoader.parse(rule("") + """
        tiers:
          free: [{limit: 10, period: 1m}]
          premium:
            - {limit: 100, period: 1m}
            - {limit: 1000, period: 1h}
        """, "t.yaml");
    assertThat(c.rules().tiers()).containsExactly(
        Map.entry("free", List.of(new Window(10, Duration.ofMinutes(1)))),
        Map.entry("premium", List.of(new Window(100, Duration.ofMinutes(1)), new Window(1000, Duration.ofHours(1)))));
    assertThat(c.rules().tier("premium")).hasSize(2);
    assertThat(c.tierOrigin("free")).isEqualTo(new ConfigLocation("t.yaml", 5, 3));
    // A tier no rule uses is fine: tiers are given to keys at run time.
    assertThat(c.warnings()).isEmpty();
  }

  @Test
  void aFileMayHoldTiersAloneAndTiersOfSeveralFilesMerge() throws Exception {
    Files.writeString(dir.resolve("a-limits.yaml"), rule(""));
    Files.writeString(dir.resolve("b-tiers.yaml"), "tiers:\n  free: [{limit: 10, period: 1m}]\n");
    Files.writeString(dir.resolve("c-tiers.yaml"), "tiers:\n  gold: [{limit: 50, period: 1m}]\n");
    LoadedConfig c = ConfigLoader.load(dir);
    assertThat(c.rules().tiers().keySet()).containsExactly("free", "gold");
    assertThat(c.rules().get("r")).isNotNull();
  }

  @Test
  void aTierDefinedInTwoFilesIsAnErrorNamingBothPlaces() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), rule("") + "tiers:\n  free: [{limit: 10, period: 1m}]\n");
    Files.writeString(dir.resolve("b.yaml"), "tiers:\n  gold: [{limit: 5, period: 1s}]\n  free: [{limit: 9, period: 1m}]\n");
    assertThatThrownBy(() -> ConfigLoader.load(dir)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).extracting(ConfigProblem::toString).containsExactly(
            dir.resolve("b.yaml") + ":3:3: duplicate tier name 'free' (first defined at " + dir.resolve("a.yaml")
                + ":5:3)"));
  }

  @Test
  void badTiersAreErrorsAtTheirPlace() {
    assertThat(errors(rule("tiers: [free]\n"))).containsExactly(
        "t.yaml:4:8: 'tiers' must be a mapping of tier names to lists of windows, such as {free: [{limit: 10, "
            + "period: 1m}]}, found a list");
    assertThat(errors(rule("""
        tiers:
          free: []
          "no spaces": [{limit: 1, period: 1}]
          gold: {limit: 1, period: 1}
          silver: [{limit: 0, period: 1m}]
          bronze: [{limit: 1, period: 1m, burst: 2}]
        """))).containsExactly(
        "t.yaml:5:9: tier 'free' has no window; a tier needs at least one",
        "t.yaml:6:3: tier name must be 1-64 letters, digits, _ . -, found 'no spaces'",
        "t.yaml:7:9: tier 'gold' must be a list of windows, each with limit and period, found a mapping",
        "t.yaml:8:20: limit must be ≥ 1, found 0",
        "t.yaml:9:35: unknown field 'burst' (expected one of: limit, period)");
    String many = "[" + "{limit: 1, period: 1s}, ".repeat(17) + "]";
    assertThat(errors(rule("tiers:\n  big: " + many + "\n")))
        .containsExactly("t.yaml:5:8: tier 'big' has 17 windows; the maximum is 16");
  }

  // ---- ban

  @Test
  void aBanIsReadIntoTheRule() throws Exception {
    LoadedConfig c = ConfigLoader.parse(rule("    ban: {after: 5, within: 1m, for: 15m}\n"), "t.yaml");
    assertThat(c.rules().get("r").ban()).isEqualTo(new BanPolicy(5, Duration.ofMinutes(1), Duration.ofMinutes(15)));
    LoadedConfig seconds = ConfigLoader.parse(rule("    ban: {after: 1, within: 0.5, for: PT2H}\n"), "t.yaml");
    assertThat(seconds.rules().get("r").ban())
        .isEqualTo(new BanPolicy(1, Duration.ofMillis(500), Duration.ofHours(2)));
    assertThat(ConfigLoader.parse(rule(""), "t.yaml").rules().get("r").ban()).isNull();
  }

  @Test
  void badBansAreErrorsNamingTheFieldAndItsRange() {
    assertThat(errors(rule("    ban: {after: 0, within: 1m, for: 15m}\n")))
        .containsExactly("t.yaml:4:18: ban.after must be from 1 to 1000000, found 0");
    assertThat(errors(rule("    ban: {after: 1000001, within: 1m, for: 15m}\n")))
        .containsExactly("t.yaml:4:18: ban.after must be from 1 to 1000000, found 1000001");
    assertThat(errors(rule("    ban: {after: five, within: 1m, for: 15m}\n")))
        .containsExactly("t.yaml:4:18: ban.after must be a whole number from 1 to 1000000, found the string \"five\"");
    assertThat(errors(rule("    ban: {after: 5, within: 500us, for: 15m}\n")))
        .containsExactly("t.yaml:4:29: ban.within must be between 1ms and 1d, found 500us");
    assertThat(errors(rule("    ban: {after: 5, within: 25h, for: 15m}\n")))
        .containsExactly("t.yaml:4:29: ban.within must be between 1ms and 1d, found 25h");
    assertThat(errors(rule("    ban: {after: 5, within: 1m, for: 31d}\n")))
        .containsExactly("t.yaml:4:38: ban.for must be between 1ms and 30d, found 31d");
    assertThat(errors(rule("    ban: {after: 5, within: 1m, for: -1m}\n")))
        .containsExactly("t.yaml:4:38: ban.for must be > 0, found -1m");
    assertThat(errors(rule("    ban: {after: 5, within: soon, for: 1m}\n")))
        .singleElement().asString().startsWith("t.yaml:4:29: ban.within");
    assertThat(errors(rule("    ban: {after: 5, within: 1m}\n")))
        .containsExactly("t.yaml:4:10: ban has no 'for' (how long a ban lasts)");
    assertThat(errors(rule("    ban: {after: 5, within: 1m, for: 1m, until: 2m}\n")))
        .containsExactly("t.yaml:4:42: unknown field 'until' (expected one of: after, within, for)");
    assertThat(errors(rule("    ban: true\n")))
        .containsExactly("t.yaml:4:10: ban must be a mapping such as {after: 5, within: 1m, for: 15m}, found the boolean true");
  }

  // ---- audit

  @Test
  void anAuditIsReadIntoTheRule() throws Exception {
    LoadedConfig c = ConfigLoader.parse(rule("    audit: {keep: 10, attribute: user}\n"), "t.yaml");
    assertThat(c.rules().get("r").audit()).isEqualTo(new AuditPolicy(10, "user"));
  }

  @Test
  void badAuditsAreErrorsNamingTheField() {
    assertThat(errors(rule("    audit: {keep: 0, attribute: user}\n")))
        .containsExactly("t.yaml:4:19: audit.keep must be from 1 to 100, found 0");
    assertThat(errors(rule("    audit: {keep: 101, attribute: user}\n")))
        .containsExactly("t.yaml:4:19: audit.keep must be from 1 to 100, found 101");
    assertThat(errors(rule("    audit: {keep: 2.5, attribute: user}\n")))
        .containsExactly("t.yaml:4:19: audit.keep must be a whole number from 1 to 100, found the number 2.5");
    assertThat(errors(rule("    audit: {keep: 10, attribute: \"user id\"}\n")))
        .singleElement().asString().startsWith("t.yaml:4:34: audit.attribute: ");
    assertThat(errors(rule("    audit: {keep: 10, attribute: 42}\n")))
        .containsExactly("t.yaml:4:34: audit.attribute must be a string, found the number 42 (quote it: \"42\")");
    assertThat(errors(rule("    audit: {keep: 10}\n")))
        .containsExactly("t.yaml:4:12: audit has no 'attribute' (the request attribute whose values are kept)");
    assertThat(errors(rule("    audit: [user]\n")))
        .containsExactly("t.yaml:4:12: audit must be a mapping such as {keep: 10, attribute: user}, found a list");
  }

  @Test
  void anAuditedAttributeThatNoOperationOverTheRuleNamesIsAWarning() throws Exception {
    String audited = rule("    audit: {keep: 10, attribute: user}\n");
    assertThat(warnings(audited)).containsExactly("t.yaml:4:34: rule 'r' audits attribute 'user', but no operation "
        + "has an item of this rule; only requests made through an operation carry attributes, so nothing would be "
        + "recorded");
    assertThat(warnings(audited + """
        operations:
          - name: login
            items: [{rule: r, key: "ip:{ip}"}]
        """)).containsExactly("t.yaml:4:34: rule 'r' audits attribute 'user', which no operation over it names "
        + "(login); requests that lack it are not recorded");
    // Named by a key, a when or an unless of any item of an operation over the rule: no warning.
    assertThat(warnings(audited + """
        operations:
          - name: login
            items: [{rule: r, key: "ip:{ip}"}, {rule: r, key: "u", when: user}]
        """)).isEmpty();
    assertThat(warnings(audited.replace("name: r", "name: s") + """
          - name: r
            config: [{limit: 1, period: 1}]
        operations:
          - name: login
            items: [{rule: s, key: "ip:{ip}"}, {rule: r, key: "user:{user}"}]
        """)).isEmpty();
  }

  // ---- allow and deny

  @Test
  void accessListsLoadIntoTheRuleSetPerRule() throws Exception {
    LoadedConfig c = ConfigLoader.parse("""
        limits:
          - name: r
            config: [{limit: 10, period: 60}]
            allow: ["ip:10.0.0.0/8", "partner:*", "user:1"]
            deny: ["ip:2001:db8::/32"]
          - name: s
            config: [{limit: 10, period: 60}]
            allow: []
        """, "t.yaml");
    assertThat(c.rules().lists(ListKind.ALLOW)).containsExactly(
        Map.entry("r", List.of("ip:10.0.0.0/8", "partner:*", "user:1")));
    assertThat(c.rules().lists(ListKind.DENY)).containsExactly(Map.entry("r", List.of("ip:2001:db8::/32")));
    assertThat(c.warnings()).isEmpty();
  }

  @Test
  void badAccessListEntriesAreErrorsAtTheEntry() {
    assertThat(errors(rule("    allow: [\"user:1\", \"ip:10.0.0.0/33\"]\n"))).containsExactly(
        "t.yaml:4:23: allow entry 2: CIDR prefix /33 is longer than 32 bits for IPv4 (entry 'ip:10.0.0.0/33')");
    assertThat(errors(rule("    deny: [\"\"]\n"))).containsExactly("t.yaml:4:12: deny entry 1: empty entry");
    assertThat(errors(rule("    deny: [\"" + "k".repeat(513) + "\"]\n")))
        .containsExactly("t.yaml:4:12: deny entry 1: entry longer than 512 characters");
    assertThat(errors(rule("    deny:\n      - ip:10.0.0.1/8\n"))).containsExactly("t.yaml:5:9: deny entry 1: entry "
        + "'ip:10.0.0.1/8' has address bits set beyond its /8 prefix; the network is ip:10.0.0.0/8");
    assertThat(errors(rule("    deny: [42]\n")))
        .containsExactly("t.yaml:4:12: deny entry 1 must be a string, found the number 42 (quote it: \"42\")");
    assertThat(errors(rule("    allow: user:1\n"))).containsExactly("t.yaml:4:12: allow must be a list of entries "
        + "(keys, prefixes ending in '*', or a prefix and a CIDR range such as ip:10.0.0.0/8), found the string \"user:1\"");
    String many = "    allow: [" + "k, ".repeat(10_001) + "]\n";
    assertThat(errors(rule(many))).containsExactly("t.yaml:4:12: allow has 10001 entries; the maximum is 10000");
  }

  @Test
  void aDenyEntryAlsoAllowedAndAnAllowEntryTheDenyListHidesAreWarnings() throws Exception {
    assertThat(warnings(rule("""
            allow: ["ip:10.0.0.0/8", "user:*", "ok"]
            deny: ["ip:10.1.0.0/16", "user:7", "ip:2001:db8::/32", "ok"]
        """))).containsExactly(
        "t.yaml:4:40: rule 'r': allow entry 'ok' never applies: the deny list matches every key it matches and is "
            + "checked first",
        "t.yaml:5:12: rule 'r': deny entry 'ip:10.1.0.0/16' is also allowed (the allow list matches every key it "
            + "matches); the deny list is checked first, so those keys are denied",
        "t.yaml:5:30: rule 'r': deny entry 'user:7' is also allowed (the allow list matches every key it matches); "
            + "the deny list is checked first, so those keys are denied",
        "t.yaml:5:60: rule 'r': deny entry 'ok' is also allowed (the allow list matches every key it matches); the "
            + "deny list is checked first, so those keys are denied");
  }

  @Test
  void aRepeatedEntryIsAWarning() throws Exception {
    assertThat(warnings(rule("    deny: [\"ip:10.0.0.1\", \"ip:10.0.0.1/32\"]\n")))
        .containsExactly("t.yaml:4:27: deny entry 2 ('ip:10.0.0.1/32') repeats entry 1");
  }

  @Test
  void aBadEntryInOneFileLoadsNothingOfAnyFile() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), rule("    deny: [\"ip:10.0.0.0/8\"]\n"));
    Files.writeString(dir.resolve("b.yaml"),
        "limits:\n  - name: s\n    config: [{limit: 1, period: 1}]\n    allow: [\"ip:::1/200\"]\n");
    assertThatThrownBy(() -> ConfigLoader.load(dir)).isInstanceOfSatisfying(ConfigException.class, e ->
        assertThat(e.problems()).extracting(ConfigProblem::toString).containsExactly(dir.resolve("b.yaml")
            + ":4:13: allow entry 1: CIDR prefix /200 is longer than 128 bits for IPv6 (entry 'ip:::1/200')"));
  }

  @Test
  void eachRuleKeepsTheListsOfItsOwnFile() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), rule("    deny: [\"ip:10.0.0.0/8\"]\n"));
    Files.writeString(dir.resolve("b.yaml"),
        "limits:\n  - name: s\n    config: [{limit: 1, period: 1}]\n    allow: [\"user:*\"]\n");
    LoadedConfig c = ConfigLoader.load(dir);
    assertThat(c.rules().lists(ListKind.DENY)).containsExactly(Map.entry("r", List.of("ip:10.0.0.0/8")));
    assertThat(c.rules().lists(ListKind.ALLOW)).containsExactly(Map.entry("s", List.of("user:*")));
  }
}
