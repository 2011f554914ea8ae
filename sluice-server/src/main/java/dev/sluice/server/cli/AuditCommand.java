package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code sluice audit}: who consumed a key. */
@Command(name = "audit", mixinStandardHelpOptions = true,
    description = {"The last distinct values of RULE's audit attribute that consumed KEY, newest first (which "
        + "users stand behind an address). Exit codes: 0 done, 2 a mistake in what was given, 3 the service could "
        + "not be reached or answer."})
final class AuditCommand extends PolicyCommand.OfKey {
  @Override
  public Integer call() {
    JsonNode a = client().call("GET", "/v1/audit/" + AdminClient.segment(rule) + "/" + AdminClient.segment(key), null);
    if (admin.json) {
      AdminClient.printJson(out(), a);
      return 0;
    }
    List<List<String>> rows = new ArrayList<>();
    a.get("values").forEach(v -> rows.add(List.of(v.asText())));
    AdminClient.table(out(), List.of("VALUE"), rows);
    return 0;
  }
}
