package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice bans}: the bans of a running service, manual and automatic. */
@Command(name = "bans", mixinStandardHelpOptions = true,
    description = {"Bans of a running service: a banned key is denied (reason 'banned') until its ban ends. "
        + "Exit codes: 0 done, 1 not found, 2 a mistake in what was given, 3 the service could not be reached "
        + "or answer."},
    subcommands = {BansCommand.Set.class, BansCommand.Get.class, BansCommand.Rm.class, BansCommand.Ls.class})
final class BansCommand extends PolicyCommand.KeyGroup {
  private static final PolicyCommand.KeyResource BANS = new PolicyCommand.KeyResource("/v1/bans", "the ban on",
      new PolicyCommand.Shape(List.of("RULE", "KEY", "UNTIL", "LEFT", "BY"), BansCommand::row));

  @Override
  PolicyCommand.KeyResource resource() {
    return BANS;
  }

  private static List<String> row(JsonNode b) {
    Instant until = Instant.parse(b.get("until").asText());
    long left = Math.max(0, Duration.between(Instant.now(), until).toSeconds());
    return List.of(b.get("rule").asText(), b.get("key").asText(), b.get("until").asText(), left + "s",
        b.get("automatic").asBoolean() ? "automatic" : "manual");
  }

  @Command(name = "set", mixinStandardHelpOptions = true,
      description = "Bans KEY under RULE for a duration or until a time, replacing any ban it had.")
  static final class Set extends PolicyCommand.SetKey {
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
    ObjectNode body() {
      ObjectNode body = AdminClient.JSON.createObjectNode();
      if (expiry.lasts != null) {
        body.put("for", expiry.lasts);
      } else {
        body.put("until", expiry.until);
      }
      return body;
    }
  }

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Shows the ban in force on KEY under RULE.")
  static final class Get extends PolicyCommand.GetKey {}

  @Command(name = "rm", mixinStandardHelpOptions = true,
      description = "Lifts the ban on KEY under RULE, manual or automatic, and forgets its counted denials.")
  static final class Rm extends PolicyCommand.RmKey {}

  @Command(name = "ls", mixinStandardHelpOptions = true, description = "Lists bans in force in key order.")
  static final class Ls extends PolicyCommand.LsKeys {}
}
