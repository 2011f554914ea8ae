package dev.sluice.server.cli;

import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code sluice lists}: the run-time allow and deny lists of a running service. */
@Command(name = "lists", mixinStandardHelpOptions = true,
    description = {"Run-time allow and deny lists of a running service (the configuration's own entries are "
        + "changed in its files). An entry is a key, a prefix followed by *, or a prefix and a CIDR range "
        + "(ip:10.0.0.0/8). Exit codes: 0 done, 1 not found, 2 a mistake in what was given, 3 the service could "
        + "not be reached or answer."},
    subcommands = {ListsCommand.Add.class, ListsCommand.Rm.class, ListsCommand.Ls.class})
final class ListsCommand extends PolicyCommand.Group {
  private static final PolicyCommand.Shape ENTRY = new PolicyCommand.Shape(List.of("LIST", "RULE", "ENTRY"),
      e -> List.of(e.get("list").asText(), e.get("rule").asText(), e.get("entry").asText()));
  private static final PolicyCommand.Shape LISTED = new PolicyCommand.Shape(List.of("ENTRY"), e -> List.of(e.asText()));
  private static final PolicyCommand.Shape RULE_ENTRY = new PolicyCommand.Shape(List.of("RULE", "ENTRY"),
      e -> List.of(e.get("rule").asText(), e.get("entry").asText()));

  static String kind(String k) {
    if (!k.equals("allow") && !k.equals("deny")) {
      throw new CliException("sluice: the list is 'allow' or 'deny', was '" + AdminClient.printable(k) + "'",
          AdminClient.EXIT_BAD_INPUT);
    }
    return k;
  }

  /** A command about the LIST (allow or deny) of RULE, named first. */
  abstract static class OfList extends PolicyCommand {
    @Parameters(index = "0", paramLabel = "LIST", description = "allow or deny")
    String list;

    @Parameters(index = "1", paramLabel = "RULE")
    String rule;

    String path() {
      return "/v1/lists/" + kind(list) + "/" + AdminClient.segment(rule);
    }
  }

  /** A command about one ENTRY of a list, named after the list and its rule. */
  abstract static class OfEntry extends OfList {
    @Parameters(index = "2", paramLabel = "ENTRY")
    String entry;

    String entryPath() {
      return path() + "/" + AdminClient.segment(entry);
    }
  }

  @Command(name = "add", mixinStandardHelpOptions = true, description = "Adds ENTRY to the LIST (allow or deny) of RULE.")
  static final class Add extends OfEntry {
    @Override
    public Integer call() {
      return show(client().call("PUT", entryPath(), null), ENTRY);
    }
  }

  @Command(name = "rm", mixinStandardHelpOptions = true,
      description = "Removes a run-time ENTRY from the LIST (allow or deny) of RULE.")
  static final class Rm extends OfEntry {
    @Override
    public Integer call() {
      client().call("DELETE", entryPath(), null);
      return removed("'" + entry + "' from the " + list + " list of rule '" + rule + "'");
    }
  }

  @Command(name = "ls", mixinStandardHelpOptions = true,
      description = "Lists the run-time entries of a LIST (allow or deny) of RULE, or of every rule by rule then entry.")
  static final class Ls extends PolicyCommand {
    @Parameters(index = "0", paramLabel = "LIST", description = "allow or deny")
    String list;

    @Parameters(index = "1", paramLabel = "RULE", arity = "0..1", description = "the rule; every rule when left out")
    String rule;

    @Mixin
    Paging paging;

    @Override
    public Integer call() {
      String path = "/v1/lists/" + kind(list);
      return rule == null ? list(path, paging, RULE_ENTRY) : list(path + "/" + AdminClient.segment(rule), paging, LISTED);
    }
  }
}
