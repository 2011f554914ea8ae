package dev.sluice.server.cli;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigProblem;
import dev.sluice.server.config.ConfigFiles;
import dev.sluice.server.config.ServiceConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Validates and lints configurations with the reader the service uses, printing problems as
 * {@code file:line:column: message} so that editors and CI logs link to them.
 */
@Command(name = "check-config", mixinStandardHelpOptions = true,
    description = {"Validate and lint configuration files or directories.",
        "Each PATH is checked as one configuration. Exit 0 if clean, 1 if there are warnings only, "
            + "2 if there are errors."})
final class CheckConfigCommand implements Callable<Integer> {

  @Parameters(arity = "1..*", paramLabel = "PATH", description = "a configuration file, or a directory of "
      + "*.yaml / *.yml files")
  List<Path> paths;

  @Option(names = "--envoy-merge-domains",
      description = "Envoy files of the same domain are merged instead of refused, as serve --envoy-merge-domains")
  boolean envoyMergeDomains;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    int errors = 0;
    int warnings = 0;
    int rules = 0;
    int operations = 0;
    int tiers = 0;
    int files = 0;
    for (Path path : paths) {
      try {
        ServiceConfig c = ConfigFiles.load(path, envoyMergeDomains);
        for (ConfigProblem w : c.warnings()) {
          out.println(w.location() + ": warning: " + w.message());
        }
        warnings += c.warnings().size();
        rules += c.rules().size();
        operations += c.rules().operations().size();
        tiers += c.rules().tiers().size();
        files += c.sources().size();
      } catch (ConfigException e) {
        for (ConfigProblem p : e.problems()) {
          out.println(p);
        }
        errors += e.problems().size();
      }
    }
    if (errors > 0) {
      out.println(count(errors, "error") + ", " + count(warnings, "warning"));
    } else {
      out.println((warnings > 0 ? count(warnings, "warning") : "ok") + ": " + count(rules, "rule")
          + (operations > 0 ? " and " + count(operations, "operation") : "")
          + (tiers > 0 ? ", " + count(tiers, "tier") : "") + " in " + count(files, "file"));
    }
    out.flush();
    return errors > 0 ? Main.EXIT_ERRORS : warnings > 0 ? Main.EXIT_WARNINGS : Main.EXIT_OK;
  }

  private static String count(int n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
