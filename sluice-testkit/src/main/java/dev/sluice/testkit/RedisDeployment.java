package dev.sluice.testkit;

import java.util.List;

/**
 * Running Redis or Valkey servers in one topology, started by the test kit on free loopback
 * ports. Administrative commands go through a minimal built-in client; tests use their own
 * client on {@link #uri()}.
 */
public interface RedisDeployment extends AutoCloseable {

  Flavor flavor();

  /** The connection string a client uses: {@code redis://}, {@code redis-sentinel://} or {@code redis-cluster://}. */
  String uri();

  /**
   * Sends a command to the primary: the server, the current Sentinel master, or the first
   * Cluster master. Replies are String, Long, List or null.
   */
  Object command(String... args);

  /** Sends a command to every master (one for standalone and Sentinel) and returns the replies in node order. */
  List<Object> commandOnAll(String... args);

  /** Deletes every key on every master. */
  default void flushAll() {
    commandOnAll("FLUSHALL");
  }

  /** The sum of {@code cmdstat_<command>} calls over all masters, from {@code INFO commandstats}. */
  default long commandCalls(String command) {
    long total = 0;
    String field = "cmdstat_" + command.toLowerCase(java.util.Locale.ROOT) + ":calls=";
    for (Object info : commandOnAll("INFO", "commandstats")) {
      for (String line : String.valueOf(info).split("\r?\n")) {
        if (line.startsWith(field)) {
          total += Long.parseLong(line.substring(field.length(), line.indexOf(',')));
        }
      }
    }
    return total;
  }

  /** A one-line description: flavor, topology and ports. */
  String describe();

  /** Stops every process (by PID) and deletes the working directory. */
  @Override
  void close();
}
