package dev.sluice.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code sluice keys}: maintenance of the Redis keyspace the Redis store writes. */
@Command(name = "keys", mixinStandardHelpOptions = true,
    description = {"Maintain a Redis keyspace written by the Redis store. Keys are read with SCAN in batches "
        + "(never KEYS), on every master of a Cluster; only keys under --prefix are read or changed."},
    subcommands = {KeysStatsCommand.class, KeysFixTtlCommand.class})
final class KeysCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command: stats or fix-ttl");
  }
}
