package dev.sluice.redis;

import java.util.List;

/** Reading {@code INFO commandstats}. */
final class CommandStats {
  private CommandStats() {}

  /** Decision calls ({@code FCALL}, {@code FCALL_RO}) counted in {@code stats}, one string per master. */
  static long decisionCalls(List<String> stats) {
    long n = 0;
    for (String master : stats) {
      for (String line : master.split("\r?\n")) {
        if (line.startsWith("cmdstat_fcall:") || line.startsWith("cmdstat_fcall_ro:")) {
          String calls = line.substring(line.indexOf("calls=") + 6);
          n += Long.parseLong(calls.substring(0, calls.indexOf(',')));
        }
      }
    }
    return n;
  }
}
