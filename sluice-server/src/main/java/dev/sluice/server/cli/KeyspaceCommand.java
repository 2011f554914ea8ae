package dev.sluice.server.cli;

import dev.sluice.server.StoreFactory;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** What every {@code sluice keys} command does around its scan: options, connection, progress, errors. */
abstract class KeyspaceCommand implements Callable<Integer> {
  @Mixin
  KeyspaceOptions options;

  @Spec
  CommandSpec spec;

  private final boolean errIsTerminal;
  private final LongSupplier nanoClock;

  KeyspaceCommand(boolean errIsTerminal, LongSupplier nanoClock) {
    this.errIsTerminal = errIsTerminal;
    this.nanoClock = nanoClock;
  }

  /** {@code sluice keys <name>}, for messages. */
  abstract String commandName();

  /** Checks the command's own options before anything connects. */
  void validate() {}

  /** Scans and prints the report. */
  abstract int scan(Keyspace keyspace, KeyLayout layout, KeyScanner scanner, Progress progress, PrintWriter out);

  @Override
  public final Integer call() {
    if (options.batch < 1 || options.batch > 1_000_000) {
      throw fail("--batch must be between 1 and 1000000, was " + options.batch);
    }
    KeyLayout layout;
    try {
      layout = new KeyLayout(options.prefix);
    } catch (IllegalArgumentException e) {
      throw fail(e.getMessage());
    }
    if (options.store.equals("memory")) {
      throw fail("--store: the memory store lives inside a process; give the URI of a Redis deployment");
    }
    validate();
    Keyspace keyspace = Stores.open(commandName(), options.store, Keyspace::connect);
    PrintWriter out = spec.commandLine().getOut();
    Progress progress = new Progress(spec.commandLine().getErr(), Progress.mode(options.progress, errIsTerminal),
        Boolean.TRUE.equals(options.progress), nanoClock);
    try (keyspace) {
      return scan(keyspace, layout, new KeyScanner(keyspace, layout, options.batch, progress), progress, out);
    } catch (RedisCommandExecutionException e) {
      // The server refused a command: an ACL without SCAN, MEMORY or EVAL; a Cluster resharding.
      throw new CliException(commandName() + ": the server refused a command: "
          + StoreFactory.reason(e, options.store));
    } catch (RedisException e) {
      throw new CliException(commandName() + ": lost " + keyspace.description() + ": "
          + StoreFactory.reason(e, options.store), Main.EXIT_UNAVAILABLE);
    } finally {
      out.flush();
    }
  }

  final CliException fail(String message) {
    return new CliException(commandName() + ": " + message);
  }

  /** {@code "N nodes"} / {@code "1 node"}. */
  static String nodes(int n) {
    return n + (n == 1 ? " node" : " nodes");
  }
}
