package dev.sluice.server.cli;

import dev.sluice.server.DecisionJson;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sluice generate-trace}: writes a synthetic trace that {@code replay} reads. */
@Command(name = "generate-trace", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Write a synthetic trace as JSON lines: unit requests arriving as a Poisson process from t = 0, "
        + "keys user:0 … user:(K-1) drawn uniformly, rules drawn uniformly from --rule.")
final class GenerateTraceCommand implements Callable<Integer> {

  @Option(names = "--requests", required = true, paramLabel = "N", description = "number of requests")
  long requests;

  @Option(names = "--rule", required = true, paramLabel = "NAME", description = "rule to request; repeatable")
  List<String> rules;

  @Mixin
  SyntheticOptions synthetic;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    SyntheticTrace trace = synthetic.trace("sluice generate-trace", "--requests", requests, rules);
    PrintWriter out = spec.commandLine().getOut();
    StringBuilder sb = new StringBuilder(128);
    trace.forEach((t, items, n) -> {
      sb.setLength(0);
      sb.append("{\"t\":").append(t).append(",\"rule\":");
      DecisionJson.string(sb, items.get(0).rule());
      sb.append(",\"key\":");
      DecisionJson.string(sb, items.get(0).key());
      sb.append(",\"cost\":1}\n");
      out.append(sb);
    });
    out.flush();
    return out.checkError() ? Main.EXIT_ERRORS : Main.EXIT_OK;
  }
}
