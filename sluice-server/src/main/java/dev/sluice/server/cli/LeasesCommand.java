package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice leases}: a leased rule as the instances leasing it last reported it. */
@Command(name = "leases", mixinStandardHelpOptions = true,
    description = {"A leased rule as the instances leasing it last reported it: with --key, one row per instance "
        + "(admitted from its lease and sent to the store in its last report interval, that interval, the size it uses, the units it holds); "
        + "without, one row per key summed over the instances, most demand first, at most 1,000. Exit codes: 0 done, "
        + "2 a mistake in what was given, 3 the service could not be reached or answer."})
final class LeasesCommand extends PolicyCommand {
  @Option(names = "--rule", required = true, paramLabel = "RULE")
  String rule;

  @Option(names = "--key", paramLabel = "KEY", description = "one key: a row per instance")
  String key;

  @Override
  public Integer call() {
    JsonNode v = client().call("GET", "/v1/leases?rule=" + AdminClient.query(rule)
        + (key == null ? "" : "&key=" + AdminClient.query(key)), null);
    if (admin.json) {
      AdminClient.printJson(out(), v);
      return 0;
    }
    List<List<String>> rows = new ArrayList<>();
    if (key != null) {
      v.get("instances").forEach(r -> rows.add(List.of(r.get("instance").asText(), r.get("admitted").asText(),
          r.get("sentToStore").asText(), r.get("intervalMs").asText(), r.get("sizeInUse").asText(),
          r.get("held").asText())));
      AdminClient.table(out(), List.of("INSTANCE", "ADMITTED", "TO_STORE", "INTERVAL_MS", "SIZE", "HELD"), rows);
    } else {
      v.get("keys").forEach(r -> rows.add(List.of(r.get("key").asText(), r.get("instances").asText(),
          r.get("admitted").asText(), r.get("sentToStore").asText(), r.get("sizeInUse").asText(),
          r.get("held").asText())));
      AdminClient.table(out(), List.of("KEY", "INSTANCES", "ADMITTED", "TO_STORE", "SIZE", "HELD"), rows);
    }
    if (v.get("truncated").asBoolean()) {
      spec.commandLine().getErr().println("more rows than shown: the answer holds at most 1,000");
    }
    return 0;
  }
}
