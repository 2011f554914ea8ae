package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.runWithInput;
import static dev.sluice.server.cli.ReplayCommandTest.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.server.cli.Cli.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice replay} of traces whose lines name operations and their attributes. */
class ReplayOperationsTest {
  static final String CONFIG = """
      limits:
        - name: per_user
          config: [{limit: 2, period: 60}]
        - name: anonymous
          config: [{limit: 1, period: 60}]
        - name: global
          config: [{limit: 100, period: 60}]
      attributes:
        ip: {type: ip, group: /24, group6: /64}
      operations:
        - name: login
          items:
            - {rule: per_user,  key: "user:{user}", when: user}
            - {rule: anonymous, key: "ip:{ip}",     unless: user}
            - {rule: global,    key: "all"}
      """;

  @TempDir
  Path dir;

  private String config() throws IOException {
    return Files.writeString(dir.resolve("limits.yaml"), CONFIG).toString();
  }

  private static List<String> items(JsonNode d) {
    List<String> out = new ArrayList<>();
    d.get("items").forEach(i -> out.add(i.get("rule").asText() + "=" + i.get("key").asText() + "x"
        + i.get("cost").asLong()));
    return out;
  }

  @Test
  void operationLinesAreDecidedAsTheirItemsAndWrittenAsItemLinesAre() throws IOException {
    String trace = """
        {"t": 0, "operation": "login", "attributes": {"user": "7", "ip": "10.0.0.1"}}
        {"t": 1, "operation": "login", "attributes": {"ip": "10.0.0.1"}}
        {"t": 2, "operation": "login", "attributes": {"ip": "10.0.0.99"}}
        {"t": 3, "operation": "login", "attributes": {"ip": "2001:db8::1"}, "cost": 0}
        {"t": 4, "items": [{"rule": "global", "key": "all", "cost": 0}]}
        """;
    Run r = runWithInput(trace, "replay", "--config", config(), "--trace", "-");
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> lines = r.outLines();
    assertThat(items(json(lines.get(0)))).containsExactly("per_user=user:7x1", "global=allx1");
    assertThat(items(json(lines.get(1)))).containsExactly("anonymous=ip:10.0.0.0/24x1", "global=allx1");
    // Another host of the same /24: the anonymous limit of 1 is spent.
    assertThat(json(lines.get(2)).get("allowed").asBoolean()).isFalse();
    assertThat(items(json(lines.get(3)))).containsExactly("anonymous=ip:2001:db8::/64x0", "global=allx0");
    assertThat(json(lines.get(4)).get("items").get(0).get("windows").get(0).get("remaining").asLong()).isEqualTo(98);
    assertThat(lines.get(5)).isEqualTo("{\"summary\":{\"requests\":5,\"allowed\":4,\"denied\":1,\"rules\":"
        + "{\"per_user\":{\"allowed\":1,\"denied\":0},\"anonymous\":{\"allowed\":2,\"denied\":1},"
        + "\"global\":{\"allowed\":4,\"denied\":1}}}}");
  }

  @Test
  void checkConfigCountsOperationsAndReportsTheirMistakesWithTheirPlace() throws IOException {
    Run ok = Cli.run("check-config", config());
    assertThat(ok.exit()).as(ok.err()).isZero();
    assertThat(ok.out()).contains("ok: 3 rules and 1 operation in 1 file");
    String bad = Files.writeString(dir.resolve("bad.yaml"), CONFIG.replace("rule: global", "rule: globl")).toString();
    Run r = Cli.run("check-config", bad);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.out()).contains("bad.yaml:15:16: operation 'login', item 3: unknown rule 'globl' (did you mean "
        + "'global'?)");
  }

  @Test
  void aBadOperationLineStopsTheReplayNamingTheLineAndWhatIsWrong() throws IOException {
    String[][] cases = {
        {"{\"t\": 0, \"operation\": \"logout\"}", "<stdin>:2: unknown operation 'logout'"},
        {"{\"t\": 0, \"operation\": \"login\", \"attributes\": {\"user\": \"7\"}, \"rule\": \"global\"}",
            "<stdin>:2: give one of: rule and key, items, or operation and attributes"},
        {"{\"t\": 0, \"operation\": \"login\", \"attributes\": {}}",
            "<stdin>:2: operation 'login' needs attribute 'ip' (for the key of rule 'anonymous')"},
        {"{\"t\": 0, \"operation\": \"login\", \"attributes\": {\"ip\": \"10.1\"}}",
            "<stdin>:2: attribute 'ip' must be an IPv4 or IPv6 address (such as 192.0.2.1 or 2001:db8::1), was '10.1'"},
        {"{\"t\": 0, \"operation\": \"login\", \"attributes\": {\"ip\": 1}}",
            "<stdin>:2: attribute 'ip' must be a string, found 1"},
        {"{\"t\": 0, \"attributes\": {\"ip\": \"10.0.0.1\"}}",
            "<stdin>:2: 'attributes' belong to an 'operation', which the line does not name"},
    };
    for (String[] c : cases) {
      String trace = "{\"t\": 0, \"rule\": \"global\", \"key\": \"all\"}\n" + c[0] + "\n";
      Run r = runWithInput(trace, "replay", "--config", config(), "--trace", "-");
      assertThat(r.exit()).as(c[0]).isNotZero();
      assertThat(r.err()).as(c[0]).contains(c[1]);
    }
  }
}
