package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sluice bans}: the bans of a running service, manual and automatic. */
@Command(name = "bans", mixinStandardHelpOptions = true,
    description = {"Bans of a running service: a banned key is denied (reason 'banned') until its ban ends. "
        + "Exit codes: 0 done, 1 not found, 2 a mistake in what was given, 3 the service could not be reached "
        + "or answer."},
    subcommands = {BansCommand.Set.class, BansCommand.Get.class, BansCommand.Rm.class, BansCommand.Ls.class})
final class BansCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command: set, get, rm or ls");
  }

  static String path(String rule, String key) {
    return "/v1/bans/" + AdminClient.segment(rule) + "/" + AdminClient.segment(key);
  }

  @Command(name = "set", mixinStandardHelpOptions = true,
      description = "Bans KEY under RULE for a duration or until a time, replacing any ban it had.")
  static final class Set extends PolicyCommand.OfKey {
    static final class Expiry {
      @Option(names = "--for", required = true, paramLabel = "DURATION", description = "how long, e.g. 15m or 2h")
      String lasts;

      @Option(names = "--until", required = true, paramLabel = "TIME",
          description = "until when, e.g. 2030-01-01T00:00:00Z")
      String until;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Expiry expiry;

    @Override
    public Integer call() {
      ObjectNode body = AdminClient.JSON.createObjectNode();
      if (expiry.lasts != null) {
        body.put("for", expiry.lasts);
      } else {
        body.put("until", expiry.until);
      }
      return show(client().call("PUT", path(rule, key), body.toString()), BAN_HEADER, PolicyCommand::banRow);
    }
  }

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Shows the ban in force on KEY under RULE.")
  static final class Get extends PolicyCommand.OfKey {
    @Override
    public Integer call() {
      return show(client().call("GET", path(rule, key), null), BAN_HEADER, PolicyCommand::banRow);
    }
  }

  @Command(name = "rm", mixinStandardHelpOptions = true,
      description = "Lifts the ban on KEY under RULE, manual or automatic, and forgets its counted denials.")
  static final class Rm extends PolicyCommand.OfKey {
    @Override
    public Integer call() {
      client().call("DELETE", path(rule, key), null);
      return removed("the ban on '" + key + "' under rule '" + rule + "'");
    }
  }

  @Command(name = "ls", mixinStandardHelpOptions = true, description = "Lists bans in force in key order.")
  static final class Ls extends PolicyCommand {
    @Option(names = "--rule", paramLabel = "RULE", description = "of this rule only")
    String rule;

    @picocli.CommandLine.Mixin
    Paging paging;

    @Override
    public Integer call() {
      return list("/v1/bans" + (rule == null ? "" : "?rule=" + AdminClient.query(rule)), paging, BAN_HEADER,
          PolicyCommand::banRow);
    }
  }
}
