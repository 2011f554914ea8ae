package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice top}: the most denied keys of a rule. */
@Command(name = "top", mixinStandardHelpOptions = true,
    description = {"The most denied keys of a rule across every instance over the last minutes, most denied "
        + "first. DENIALS is at least the true count and at most ERROR more. Exit codes: 0 done, 2 a mistake in "
        + "what was given, 3 the service could not be reached or answer."})
final class TopCommand extends PolicyCommand {
  @Option(names = "--rule", required = true, paramLabel = "RULE")
  String rule;

  @Option(names = "--minutes", defaultValue = "5", paramLabel = "N", description = "1 to 60 (default: ${DEFAULT-VALUE})")
  int minutes;

  @Option(names = "--count", defaultValue = "10", paramLabel = "N", description = "keys shown (default: ${DEFAULT-VALUE})")
  int count;

  @Override
  public Integer call() {
    JsonNode t = client().call("GET", "/v1/top?rule=" + AdminClient.query(rule) + "&minutes=" + minutes
        + "&count=" + count, null);
    if (admin.json) {
      AdminClient.printJson(out(), t);
      return 0;
    }
    List<List<String>> rows = new ArrayList<>();
    t.get("items").forEach(o -> rows.add(List.of(o.get("key").asText(), o.get("denials").asText(),
        o.get("error").asText())));
    AdminClient.table(out(), List.of("KEY", "DENIALS", "ERROR"), rows);
    return 0;
  }
}
