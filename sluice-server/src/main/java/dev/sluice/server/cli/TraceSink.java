package dev.sluice.server.cli;

import dev.sluice.Item;
import dev.sluice.OperationRequest;
import java.util.List;

/** Receives the requests of a trace in order. */
interface TraceSink {
  /**
   * @param t milliseconds on the trace's clock
   * @param line where the request was read (its line, or its number in a synthetic trace)
   */
  void accept(long t, List<Item> items, long line);

  /**
   * A request by operation ({@code {"t","operation","attributes","cost"}}). Sinks of synthetic
   * traces, which are items only, need not take them.
   */
  default void accept(long t, OperationRequest request, long line) {
    throw new CliException("line " + line + ": this command reads traces of items only");
  }
}
