package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice limits}: the live limits of a running service. */
@Command(name = "limits", mixinStandardHelpOptions = true,
    description = {"Live limits of a running service: a key's tier or windows of its own, kept in the store and "
        + "applied by every instance. Exit codes: 0 done, 1 not found, 2 a mistake in what was given, "
        + "3 the service could not be reached or answer."},
    subcommands = {LimitsCommand.Set.class, LimitsCommand.Get.class, LimitsCommand.Rm.class, LimitsCommand.Ls.class})
final class LimitsCommand extends PolicyCommand.KeyGroup {
  private static final PolicyCommand.KeyResource LIMITS = new PolicyCommand.KeyResource("/v1/limits",
      "the live limit of", new PolicyCommand.Shape(List.of("RULE", "KEY", "LIMIT"),
          l -> List.of(l.get("rule").asText(), l.get("key").asText(), limitText(l))));

  @Override
  PolicyCommand.KeyResource resource() {
    return LIMITS;
  }

  private static String limitText(JsonNode l) {
    if (l.has("tier")) {
      return "tier " + l.get("tier").asText();
    }
    List<String> ws = new ArrayList<>();
    l.get("windows").forEach(w -> ws.add(w.get("limit").asText() + "/" + w.get("period").asText()));
    return String.join(", ", ws);
  }

  @Command(name = "set", mixinStandardHelpOptions = true,
      description = "Gives KEY under RULE a tier of the configuration or windows of its own, replacing any it had; "
          + "what the key consumed stays consumed.")
  static final class Set extends PolicyCommand.SetKey {
    static final class Limit {
      @Option(names = "--tier", required = true, paramLabel = "NAME", description = "a tier of the configuration")
      String tier;

      @Option(names = "--window", required = true, paramLabel = "LIMIT/PERIOD",
          description = "a window of the key's own, e.g. 10/1m (repeat for several)")
      List<String> windows;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Limit limit;

    @Override
    ObjectNode body() {
      ObjectNode body = AdminClient.JSON.createObjectNode();
      if (limit.tier != null) {
        body.put("tier", limit.tier);
      } else {
        ArrayNode ws = body.putArray("windows");
        for (String w : limit.windows) {
          int slash = w.indexOf('/');
          long n;
          try {
            n = slash < 1 ? -1 : Long.parseLong(w.substring(0, slash));
          } catch (NumberFormatException e) {
            n = -1;
          }
          if (n < 1 || slash == w.length() - 1) {
            throw new CliException("sluice: --window '" + AdminClient.printable(w)
                + "' must be LIMIT/PERIOD, such as 10/1m or 1000/1h", AdminClient.EXIT_BAD_INPUT);
          }
          ws.addObject().put("limit", n).put("period", w.substring(slash + 1));
        }
      }
      return body;
    }
  }

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Shows the live limit of KEY under RULE.")
  static final class Get extends PolicyCommand.GetKey {}

  @Command(name = "rm", mixinStandardHelpOptions = true,
      description = "Removes the live limit of KEY under RULE: the rule's own windows apply again.")
  static final class Rm extends PolicyCommand.RmKey {}

  @Command(name = "ls", mixinStandardHelpOptions = true, description = "Lists live limits in key order, a page at a time.")
  static final class Ls extends PolicyCommand.LsKeys {}
}
