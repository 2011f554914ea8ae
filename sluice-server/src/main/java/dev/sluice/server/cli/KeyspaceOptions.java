package dev.sluice.server.cli;

import picocli.CommandLine.Option;

/** The options every {@code sluice keys} command shares. */
final class KeyspaceOptions {
  @Option(names = "--store", required = true, paramLabel = "URI", description = "the Redis deployment: "
      + "redis://[user:password@]host[:port][/db], rediss://…, redis-sentinel://h1:p1,h2:p2[/db]#master or "
      + "redis-cluster://h1:p1,h2:p2 (every master of a Cluster is scanned)")
  String store;

  @Option(names = "--prefix", defaultValue = "sluice:", paramLabel = "TEXT",
      description = "the store's key prefix; only keys that start with it are read or changed "
          + "(default: ${DEFAULT-VALUE})")
  String prefix;

  @Option(names = "--batch", defaultValue = "1000", paramLabel = "N",
      description = "the COUNT hint of each SCAN: keys read per round trip (default: ${DEFAULT-VALUE})")
  int batch;

  @Option(names = "--progress", negatable = true, description = "show progress on standard error (default: on; "
      + "one updating line on a terminal, a line every 5 s otherwise)")
  Boolean progress;

  @Option(names = "--json", description = "print the report as one JSON object")
  boolean json;
}
