package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sluice limits}: the live limits of a running service. */
@Command(name = "limits", mixinStandardHelpOptions = true,
    description = {"Live limits of a running service: a key's tier or windows of its own, kept in the store and "
        + "applied by every instance. Exit codes: 0 done, 1 not found, 2 a mistake in what was given, "
        + "3 the service could not be reached or answer."},
    subcommands = {LimitsCommand.Set.class, LimitsCommand.Get.class, LimitsCommand.Rm.class, LimitsCommand.Ls.class})
final class LimitsCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command: set, get, rm or ls");
  }

  static String path(String rule, String key) {
    return "/v1/limits/" + AdminClient.segment(rule) + "/" + AdminClient.segment(key);
  }

  @Command(name = "set", mixinStandardHelpOptions = true,
      description = "Gives KEY under RULE a tier of the configuration or windows of its own, replacing any it had; "
          + "what the key consumed stays consumed.")
  static final class Set extends PolicyCommand.OfKey {
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
    public Integer call() {
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
      return show(client().call("PUT", path(rule, key), body.toString()), LIMIT_HEADER,
          l -> List.of(l.get("rule").asText(), l.get("key").asText(), limitText(l)));
    }
  }

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Shows the live limit of KEY under RULE.")
  static final class Get extends PolicyCommand.OfKey {
    @Override
    public Integer call() {
      return show(client().call("GET", path(rule, key), null), LIMIT_HEADER,
          l -> List.of(l.get("rule").asText(), l.get("key").asText(), limitText(l)));
    }
  }

  @Command(name = "rm", mixinStandardHelpOptions = true,
      description = "Removes the live limit of KEY under RULE: the rule's own windows apply again.")
  static final class Rm extends PolicyCommand.OfKey {
    @Override
    public Integer call() {
      client().call("DELETE", path(rule, key), null);
      return removed("the live limit of '" + key + "' under rule '" + rule + "'");
    }
  }

  @Command(name = "ls", mixinStandardHelpOptions = true, description = "Lists live limits in key order, a page at a time.")
  static final class Ls extends PolicyCommand {
    @Option(names = "--rule", paramLabel = "RULE", description = "of this rule only")
    String rule;

    @picocli.CommandLine.Mixin
    Paging paging;

    @Override
    public Integer call() {
      return list("/v1/limits" + (rule == null ? "" : "?rule=" + AdminClient.query(rule)), paging, LIMIT_HEADER,
          l -> List.of(l.get("rule").asText(), l.get("key").asText(), limitText(l)));
    }
  }
}
