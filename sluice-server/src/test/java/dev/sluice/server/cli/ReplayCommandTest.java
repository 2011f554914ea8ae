package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.example;
import static dev.sluice.server.cli.Cli.run;
import static dev.sluice.server.cli.Cli.runWithInput;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.server.cli.Cli.Run;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayCommandTest {
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path dir;

  static JsonNode json(String line) {
    try {
      return JSON.readTree(line);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text).toString();
  }

  private String config() throws IOException {
    return write("limits.yaml", CheckConfigCommandTest.SPEC_EXAMPLE);
  }

  @Test
  void multiWindowTraceDeniesWithoutConsumingTheMinuteWindow() {
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"));
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> lines = r.outLines();
    assertThat(lines).hasSize(10);

    long[][] remaining = {{19, 4}, {18, 3}, {17, 2}, {16, 1}, {15, 0}};
    for (int i = 0; i < 5; i++) {
      JsonNode d = json(lines.get(i));
      assertThat(d.get("t").asLong()).isEqualTo(i * 100L);
      assertThat(d.get("allowed").asBoolean()).isTrue();
      JsonNode ws = d.get("items").get(0).get("windows");
      assertThat(ws.get(0).get("remaining").asLong()).isEqualTo(remaining[i][0]);
      assertThat(ws.get(1).get("remaining").asLong()).isEqualTo(remaining[i][1]);
    }
    for (int i = 5; i < 8; i++) {
      JsonNode d = json(lines.get(i));
      assertThat(d.get("allowed").asBoolean()).isFalse();
      assertThat(d.get("retryAfterMs").asLong()).isEqualTo(3000 - i * 100L);
      JsonNode minute = d.get("items").get(0).get("windows").get(0);
      JsonNode three = d.get("items").get(0).get("windows").get(1);
      assertThat(minute.get("remaining").asLong()).isEqualTo(15);
      assertThat(minute.get("exceeded").asBoolean()).isFalse();
      assertThat(three.get("exceeded").asBoolean()).isTrue();
      assertThat(three.get("retryAfterMs").asLong()).isEqualTo(3000 - i * 100L);
    }
    JsonNode last = json(lines.get(8));
    assertThat(last.get("t").asLong()).isEqualTo(3000);
    assertThat(last.get("allowed").asBoolean()).isTrue();
    assertThat(last.get("items").get(0).get("windows").get(0).get("remaining").asLong()).isEqualTo(14);
    assertThat(lines.get(9)).isEqualTo(
        "{\"summary\":{\"requests\":9,\"allowed\":6,\"denied\":3,\"rules\":{\"auth.createToken\":{\"allowed\":6,"
            + "\"denied\":3}}}}");
  }

  @Test
  void outputLinesHaveExactlyTheDocumentedShape() {
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"));
    assertThat(r.outLines().get(5)).isEqualTo("{\"t\":500,\"allowed\":false,\"retryAfterMs\":2500,\"waitMs\":0,"
        + "\"items\":[{\"rule\":\"auth.createToken\",\"key\":\"user:42\",\"cost\":1,\"windows\":["
        + "{\"limit\":20,\"periodMs\":60000,\"remaining\":15,\"retryAfterMs\":0,\"resetAfterMs\":59900,\"exceeded\":false},"
        + "{\"limit\":5,\"periodMs\":3000,\"remaining\":0,\"retryAfterMs\":2500,\"resetAfterMs\":2900,\"exceeded\":true}"
        + "]}]}");
  }

  @Test
  void traceFromStandardInputWithItemsDecidesAllOrNothing() throws IOException {
    String trace = """
        {"t": 0, "items": [{"rule": "auth.createToken", "key": "ip:1", "cost": 5}, {"rule": "auth.createToken", "key": "user:1"}]}
        {"t": 1, "items": [{"rule": "auth.createToken", "key": "ip:2"}, {"rule": "auth.createToken", "key": "user:1", "cost": 4}]}
        {"t": 2, "rule": "auth.createToken", "key": "ip:2"}
        """;
    Run r = runWithInput(trace, "replay", "--config", config(), "--trace", "-");
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> lines = r.outLines();
    assertThat(json(lines.get(0)).get("allowed").asBoolean()).isTrue();
    // user:1 has 4 left in its 3s window; cost 4 fits, so both items are taken.
    JsonNode second = json(lines.get(1));
    assertThat(second.get("allowed").asBoolean()).isTrue();
    assertThat(second.get("items").get(1).get("windows").get(1).get("remaining").asLong()).isZero();
    JsonNode third = json(lines.get(2));
    assertThat(third.get("items").get(0).get("windows").get(1).get("remaining").asLong()).isEqualTo(3);
    assertThat(lines.get(3)).isEqualTo("{\"summary\":{\"requests\":3,\"allowed\":3,\"denied\":0,\"rules\":"
        + "{\"auth.createToken\":{\"allowed\":5,\"denied\":0}}}}");
  }

  @Test
  void deniedMultiItemRequestConsumesNothing() throws IOException {
    String trace = """
        {"t": 0, "rule": "auth.createToken", "key": "user:1", "cost": 5}
        {"t": 1, "items": [{"rule": "auth.createToken", "key": "ip:9"}, {"rule": "auth.createToken", "key": "user:1"}]}
        {"t": 2, "rule": "auth.createToken", "key": "ip:9", "cost": 0}
        """;
    Run r = runWithInput(trace, "replay", "--config", config());
    List<String> lines = r.outLines();
    assertThat(json(lines.get(1)).get("allowed").asBoolean()).isFalse();
    JsonNode peek = json(lines.get(2)).get("items").get(0).get("windows");
    assertThat(peek.get(0).get("remaining").asLong()).isEqualTo(20);
    assertThat(peek.get(1).get("remaining").asLong()).isEqualTo(5);
  }

  @Test
  void summaryOnlyPrintsJustTheSummary() {
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--summary-only");
    assertThat(r.outLines()).containsExactly(
        "{\"summary\":{\"requests\":9,\"allowed\":6,\"denied\":3,\"rules\":{\"auth.createToken\":{\"allowed\":6,"
            + "\"denied\":3}}}}");
  }

  @Test
  void shadowRulesReportWhatTheyWouldHaveDenied() {
    String trace = "{\"t\":0,\"rule\":\"checkout.new\",\"key\":\"u\",\"cost\":3}\n"
        + "{\"t\":1,\"rule\":\"checkout.new\",\"key\":\"u\"}\n";
    Run r = runWithInput(trace, "replay", "--config", example("limits.yaml"));
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(json(r.outLines().get(1)).get("allowed").asBoolean()).isTrue();
    assertThat(r.outLines().get(2)).isEqualTo("{\"summary\":{\"requests\":2,\"allowed\":2,\"denied\":0,\"rules\":"
        + "{\"checkout.new\":{\"allowed\":2,\"denied\":0,\"shadowDenied\":1}}}}");
  }

  @Test
  void malformedLineIsAnErrorNamingItsLine() throws IOException {
    String trace = write("t.jsonl", "{\"t\":0,\"rule\":\"auth.createToken\",\"key\":\"a\"}\n\n"
        + "{\"t\":1,\"rule\":\"auth.createToken\",\"key\":\"a\"\n");
    Run r = run("replay", "--config", config(), "--trace", trace);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.errLines()).containsExactly(trace + ":3: not valid JSON: Unexpected end-of-input: expected close "
        + "marker for Object (start marker at line 3, column 1)");
    assertThat(r.outLines()).hasSize(1); // the line before the mistake was decided; no summary

    trace = write("u.jsonl", "{\"t\":0,\"rule\":\"auth.createToken\",\"key\":\"a\"\n"
        + "{\"t\":1,\"rule\":\"auth.createToken\",\"key\":\"a\"}\n");
    r = run("replay", "--config", config(), "--trace", trace);
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.errLines()).singleElement().asString().startsWith(trace + ":1: not valid JSON: ");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void traceMistakesAreErrorsNamingTheirLine() throws IOException {
    String cfg = config();
    String[][] cases = {
        {"{\"t\":5,\"rule\":\"auth.createToken\",\"key\":\"a\"}\n{\"t\":4,\"rule\":\"auth.createToken\",\"key\":\"a\"}",
            ":2: t went backwards (4 after 5); a trace must be in time order"},
        {"{\"t\":0,\"rule\":\"nope\",\"key\":\"a\"}", ":1: unknown rule 'nope'"},
        {"{\"t\":0,\"rule\":\"auth.createToken\",\"key\":\"\"}", ":1: key must not be empty (rule 'auth.createToken')"},
        {"{\"t\":0,\"rule\":\"auth.createToken\",\"key\":\"a\",\"cots\":2}",
            ":1: unknown field 'cots' (expected one of: t, rule, key, cost, items, operation, attributes)"},
        {"{\"rule\":\"auth.createToken\",\"key\":\"a\"}", ":1: missing 't' (milliseconds on the trace's clock)"},
        {"{\"t\":1.5,\"rule\":\"auth.createToken\",\"key\":\"a\"}",
            ":1: t must be a whole number of milliseconds ≥ 0, found 1.5"},
        {"{\"t\":-1,\"rule\":\"auth.createToken\",\"key\":\"a\"}",
            ":1: t must be a whole number of milliseconds ≥ 0 and ≤ 9223372036854775, found -1"},
        {"{\"t\":0,\"rule\":\"auth.createToken\",\"key\":7}", ":1: key must be a string, found 7"},
        {"{\"t\":0,\"rule\":\"auth.createToken\",\"key\":\"a\",\"cost\":-1}",
            ":1: cost must be a whole number of ≥ 0, found -1"},
        {"{\"t\":0,\"key\":\"a\"}", ":1: missing 'rule' (or give 'items')"},
        {"{\"t\":0,\"items\":[]}", ":1: items must not be empty"},
        {"{\"t\":0,\"rule\":\"auth.createToken\",\"items\":[{\"rule\":\"auth.createToken\",\"key\":\"a\"}]}",
            ":1: give either rule, key and cost, or items, not both"},
        {"[1]", ":1: expected a JSON object such as {\"t\":0,\"rule\":\"…\",\"key\":\"…\"}, found a list"},
        {"{\"t\":0,\"t\":1,\"rule\":\"auth.createToken\",\"key\":\"a\"}", ":1: not valid JSON: Duplicate field 't'"},
    };
    List<String> failures = new ArrayList<>();
    for (String[] c : cases) {
      Run r = runWithInput(c[0] + "\n", "replay", "--config", cfg, "--summary-only");
      String expected = "<stdin>" + c[1];
      if (r.exit() != 2 || !r.err().strip().equals(expected)) {
        failures.add("for " + c[0] + ": exit " + r.exit() + ", " + r.err().strip() + "\n   expected " + expected);
      }
    }
    assertThat(failures).isEmpty();
  }

  @Test
  void badConfigExitsTwoWithLocationsAndNoStackTrace() {
    Run r = run("replay", "--config", example("bad.yaml"), "--trace", example("trace.jsonl"));
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.errLines()).hasSize(5).first().isEqualTo(
        example("bad.yaml") + ":7:9: unknown field 'limt' (expected one of: limit, period)");
    assertThat(r.err()).doesNotContain("Exception").doesNotContain("\tat ");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void configWarningsGoToStandardErrorAndTheReplayRuns() {
    String trace = "{\"t\":0,\"rule\":\"service.actionName\",\"key\":\"a\"}\n";
    Run r = runWithInput(trace, "replay", "--config", example("lint.yaml"));
    assertThat(r.exit()).isZero();
    assertThat(r.errLines()).singleElement().asString().startsWith(example("lint.yaml") + ":6:9: warning: ");
    assertThat(r.outLines()).hasSize(2);
  }

  @Test
  void unreachableOrUnknownStoresAreRefusedClearly() throws IOException {
    Run r = run("replay", "--config", config(), "--store", "redis://:s3cret@127.0.0.1:1", "--trace",
        example("trace.jsonl"));
    assertThat(r.exit()).isEqualTo(Main.EXIT_UNAVAILABLE);
    assertThat(r.err().strip())
        .startsWith("sluice replay: cannot connect to redis://:***@127.0.0.1:1: ")
        .doesNotContain("s3cret");
    r = run("replay", "--config", config(), "--store", "mongo://x", "--trace", example("trace.jsonl"));
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("unknown store 'mongo://x'");
  }

  @Test
  void missingTraceFileIsAnError() throws IOException {
    Run r = run("replay", "--config", config(), "--trace", dir.resolve("none.jsonl").toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err().strip()).isEqualTo("sluice replay: --trace: no such file: " + dir.resolve("none.jsonl"));
  }

  /**
   * The memory store sweeps idle keys on the trace's clock, and only idle ones: a key that used
   * its budget a long trace-time ago, with 200,000 requests for other keys since, still has it
   * used.
   */
  @Test
  void keysAreRememberedAcrossSweepsOnTheTraceClock() throws IOException {
    StringBuilder trace = new StringBuilder();
    for (int i = 0; i < 5; i++) {
      trace.append("{\"t\":").append(i).append(",\"rule\":\"auth.createToken\",\"key\":\"hot\"}\n");
    }
    // 200,000 requests over 20,000 other keys across 20 s of trace time: several sweeps.
    for (int i = 0; i < 200_000; i++) {
      trace.append("{\"t\":").append(100 + i / 10).append(",\"rule\":\"auth.createToken\",\"key\":\"k")
          .append(i % 20_000).append("\"}\n");
    }
    trace.append("{\"t\":30000,\"rule\":\"auth.createToken\",\"key\":\"hot\"}\n");
    Run r = run("replay", "--config", config(), "--trace", write("t.jsonl", trace.toString()));
    List<String> lines = r.outLines();
    JsonNode hot = json(lines.get(lines.size() - 2)).get("items").get(0);
    assertThat(hot.get("key").asText()).isEqualTo("hot");
    assertThat(hot.get("windows").get(0).get("remaining").asLong()).isEqualTo(14);
  }

  @Test
  void syntheticReplayIsReproducibleAndCountsEveryRequest() throws IOException {
    String[] args = {"replay", "--config", config(), "--synthetic", "100000", "--keys", "10000", "--rate", "20000",
        "--summary-only"};
    Run first = run(args);
    Run second = run(args);
    assertThat(first.exit()).as(first.err()).isZero();
    assertThat(second.out()).isEqualTo(first.out());
    JsonNode s = json(first.outLines().get(0)).get("summary");
    assertThat(s.get("requests").asLong()).isEqualTo(100_000);
    assertThat(s.get("allowed").asLong() + s.get("denied").asLong()).isEqualTo(100_000);
    assertThat(s.get("denied").asLong()).isPositive();
    long perRule = 0;
    for (JsonNode rule : s.get("rules")) {
      perRule += rule.get("allowed").asLong() + rule.get("denied").asLong();
    }
    assertThat(perRule).isEqualTo(100_000);
    assertThat(s.get("rules").fieldNames()).toIterable().containsExactly("auth.createToken", "service.actionName");
  }

  @Test
  void generatedTraceReplaysLikeTheSyntheticOne() throws IOException {
    Run gen = run("generate-trace", "--requests", "5000", "--keys", "50", "--rate", "100", "--rule",
        "auth.createToken", "--seed", "7");
    assertThat(gen.exit()).isZero();
    List<String> lines = gen.outLines();
    assertThat(lines).hasSize(5000);
    long previous = 0;
    for (String l : lines) {
      JsonNode n = json(l);
      assertThat(n.get("t").asLong()).isGreaterThanOrEqualTo(previous);
      previous = n.get("t").asLong();
      assertThat(n.get("key").asText()).matches("user:[0-9]+");
    }
    assertThat(previous).isBetween(40_000L, 60_000L); // 5000 requests at 100/s: about 50 s

    String cfg = config();
    Run fromFile = run("replay", "--config", cfg, "--trace", write("g.jsonl", gen.out()), "--summary-only");
    Run synthetic = run("replay", "--config", cfg, "--synthetic", "5000", "--keys", "50", "--rate", "100", "--rule",
        "auth.createToken", "--seed", "7", "--summary-only");
    assertThat(fromFile.out()).isEqualTo(synthetic.out());
    assertThat(json(fromFile.outLines().get(0)).get("summary").get("denied").asLong()).isPositive();
  }

  @Test
  void syntheticOptionsAreChecked() throws IOException {
    Run r = run("replay", "--config", config(), "--synthetic", "10", "--rule", "nope");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err().strip()).isEqualTo("sluice replay: --rule: no rule named 'nope' in " + dir.resolve("limits.yaml"));
    r = run("replay", "--config", config(), "--synthetic", "10", "--trace", "x");
    assertThat(r.err().strip()).isEqualTo("sluice replay: give --trace or --synthetic, not both");
  }
}
