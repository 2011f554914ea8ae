package dev.sluice.server.cli;

import java.util.List;
import picocli.CommandLine.Option;

/** The shape of a synthetic trace, as {@code generate-trace} writes it and {@code replay} decides it. */
final class SyntheticOptions {

  @Option(names = "--keys", defaultValue = "1000", paramLabel = "K",
      description = "synthetic requests: number of distinct keys (default: ${DEFAULT-VALUE})")
  int keys;

  @Option(names = "--rate", defaultValue = "1000", paramLabel = "R",
      description = "synthetic requests: requests per second of trace time (default: ${DEFAULT-VALUE})")
  double rate;

  @Option(names = "--seed", defaultValue = "1",
      description = "synthetic requests: random seed (default: ${DEFAULT-VALUE})")
  long seed;

  /**
   * {@code requests} synthetic requests for {@code rules}.
   *
   * @param requestsOption the option that gave {@code requests}, for messages
   */
  SyntheticTrace trace(String command, String requestsOption, long requests, List<String> rules) {
    if (requests < 0 || keys < 1 || !(rate > 0)) {
      throw new CliException(command + ": " + requestsOption + " must be ≥ 0, --keys ≥ 1 and --rate > 0");
    }
    return new SyntheticTrace(requests, keys, rate, rules, seed);
  }
}
