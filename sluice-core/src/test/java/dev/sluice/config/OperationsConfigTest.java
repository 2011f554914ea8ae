package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Attribute;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OperationsConfigTest {
  private static final String RULES = """
      limits:
        - name: per_user
          config: [{limit: 10, period: 60}]
        - name: anonymous
          config: [{limit: 2, period: 60}]
        - name: per_ip
          config: [{limit: 20, period: 60}]
        - name: global
          config: [{limit: 1000, period: 1}]
      """;

  static List<String> errors(String yaml) {
    try {
      ConfigLoader.parse(yaml, "t.yaml");
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigProblem::toString).toList();
    }
    throw new AssertionError("expected the configuration to be rejected:\n" + yaml);
  }

  @Test
  void operationsAndAttributesLoadIntoTheRuleSet() throws Exception {
    LoadedConfig c = ConfigLoader.parse(RULES + """
        attributes:
          ip: {type: ip, group: /24, group6: /64}
          client: {type: string}
        operations:
          - name: auth.createToken
            items:
              - {rule: per_user,  key: "user:{user}", when: user}
              - {rule: anonymous, key: "ip:{ip}",     unless: user}
              - {rule: per_ip,    key: "ip:{ip}", cost: 2}
              - {rule: global,    key: "all"}
        """, "t.yaml");

    Operation op = c.rules().operation("auth.createToken");
    assertThat(op.items()).containsExactly(
        OperationItem.of("per_user", "user:{user}").when("user"),
        OperationItem.of("anonymous", "ip:{ip}").unless("user"),
        OperationItem.of("per_ip", "ip:{ip}").cost(2),
        OperationItem.of("global", "all"));
    assertThat(c.rules().attribute("ip")).isEqualTo(Attribute.ip("ip", 24, 64));
    assertThat(c.rules().attribute("client")).isEqualTo(Attribute.string("client"));
    assertThat(c.operationOrigin("auth.createToken")).isEqualTo(new ConfigLocation("t.yaml", 14, 11));
  }

  @Test
  void groupPrefixesMayBeWrittenWithOrWithoutTheSlash() throws Exception {
    LoadedConfig c = ConfigLoader.parse(RULES + """
        attributes:
          ip: {type: ip, group: 16, group6: "/48"}
        """, "t.yaml");
    assertThat(c.rules().attribute("ip")).isEqualTo(Attribute.ip("ip", 16, 48));
  }

  @Test
  void anOperationNamingAnUnknownRuleIsAnErrorAtThatItemsRule() {
    assertThat(errors(RULES + """
        operations:
          - name: op
            items:
              - {rule: per_user, key: "user:{user}"}
              - {rule: per_usr, key: "user:{user}"}
        """)).containsExactly("t.yaml:14:16: operation 'op', item 2: unknown rule 'per_usr' (did you mean 'per_user'?)");
  }

  @Test
  void operationMistakesAreErrorsEachAtItsPlace() {
    assertThat(errors(RULES + """
        operations:
          - name: a
            items: []
          - name: b
            items:
              - {rule: global, key: "x:{user"}
              - {rule: global, key: "x}"}
              - {rule: global, key: "{}"}
              - {rule: global, key: "all", when: user, unless: user}
              - {rule: global, key: "all", cost: -1}
              - {rule: global, key: "all", colour: red}
              - {key: "all"}
          - name: a
            items: [{rule: global, key: all}]
          - items: [{rule: global, key: all}]
        """)).containsExactly(
            "t.yaml:12:12: operation 'a' has no items; an operation needs at least one",
            "t.yaml:15:29: key template 'x:{user' has a '{' at position 3 that is never closed; write '{{' for a literal brace",
            "t.yaml:16:29: key template 'x}' has a lone '}' at position 2; write '}}' for a literal brace",
            "t.yaml:17:29: key template '{}' has placeholder '{}' at position 1; a placeholder is an attribute name, 1-64 letters, digits and _ . -",
            "t.yaml:18:56: when and unless both name attribute 'user': the item could never apply",
            "t.yaml:19:42: cost must be from 0 to 1000000000000000, found -1",
            "t.yaml:20:36: unknown field 'colour' (expected one of: rule, key, when, unless, cost)",
            "t.yaml:21:9: an item of operation 'b' has no 'rule'",
            "t.yaml:22:11: duplicate operation name 'a' (first defined at line 11, column 11)",
            "t.yaml:24:5: operation 4 has no 'name'");
  }

  @Test
  void anOperationWhoseConditionsCanLeaveEveryItemOutIsAnError() {
    assertThat(errors(RULES + """
        operations:
          - name: op
            items:
              - {rule: per_user, key: "user:{user}", when: user}
              - {rule: per_ip, key: "ip:{ip}", when: ip}
        """)).containsExactly("t.yaml:11:11: operation 'op' leaves out every item when user is absent and ip is absent: "
            + "such a request would be limited by nothing; add an item without when or unless");
  }

  @Test
  void complementaryConditionsCoverEveryRequest() throws Exception {
    LoadedConfig c = ConfigLoader.parse(RULES + """
        operations:
          - name: op
            items:
              - {rule: per_user, key: "user:{user}", when: user}
              - {rule: anonymous, key: "ip:{ip}", unless: user}
        """, "t.yaml");
    assertThat(c.rules().operation("op").items()).hasSize(2);
  }

  @Test
  void attributeMistakesAreErrorsEachAtItsPlace() {
    assertThat(errors(RULES + """
        attributes:
          a: {type: ip, group: /33}
          b: {type: ip, group6: /129}
          c: {type: ip, group: 24x}
          d: {type: string, group: /24}
          e: {type: hostname}
          f: {group: /24}
          "bad name": {type: ip}
          g: ip
        """)).containsExactly(
            "t.yaml:11:24: group must be an IPv4 prefix length from /0 to /32 (such as /24), found /33",
            "t.yaml:12:25: group6 must be an IPv6 prefix length from /0 to /128 (such as /64), found /129",
            "t.yaml:13:24: group must be an IPv4 prefix length from /0 to /32 (such as /24), found 24x",
            "t.yaml:14:21: group applies only to attributes of type ip",
            "t.yaml:15:13: unknown type 'hostname' (expected one of: string, ip)",
            "t.yaml:16:6: attribute 'f' has no 'type' (ip or string)",
            "t.yaml:17:3: attribute name must be 1-64 characters of letters, digits and _ . -, was 'bad name'",
            "t.yaml:18:6: attribute 'g' must be a mapping such as {type: ip, group: /24}, found the string \"ip\"");
  }

  @Test
  void anOperationMayNameTheRulesOfAnotherFileButNotTwiceItsName(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("a.yaml"), RULES);
    Files.writeString(dir.resolve("b.yaml"), """
        limits: []
        operations:
          - name: op
            items: [{rule: global, key: all}]
        """);
    LoadedConfig c = ConfigLoader.load(dir);
    assertThat(c.rules().operation("op").items()).containsExactly(OperationItem.of("global", "all"));

    Files.writeString(dir.resolve("c.yaml"), """
        limits: []
        attributes:
          ip: {type: ip}
        operations:
          - name: op
            items: [{rule: global, key: all}]
        """);
    Files.writeString(dir.resolve("d.yaml"), """
        limits: []
        attributes:
          ip: {type: ip}
        """);
    try {
      ConfigLoader.load(dir);
      throw new AssertionError("expected duplicates to be rejected");
    } catch (ConfigException e) {
      assertThat(e.problems()).extracting(ConfigProblem::toString).containsExactly(
          dir.resolve("c.yaml") + ":5:11: duplicate operation name 'op' (first defined at " + dir.resolve("b.yaml")
              + ":3:11)",
          dir.resolve("d.yaml") + ":3:3: attribute 'ip' is declared twice (first at " + dir.resolve("c.yaml") + ":3:3)");
    }
  }
}
