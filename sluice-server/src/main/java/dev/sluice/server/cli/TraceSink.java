package dev.sluice.server.cli;

import dev.sluice.Item;
import java.util.List;

/** Receives the requests of a trace in order. */
interface TraceSink {
  /**
   * @param t milliseconds on the trace's clock
   * @param line where the request was read (its line, or its number in a synthetic trace)
   */
  void accept(long t, List<Item> items, long line);
}
