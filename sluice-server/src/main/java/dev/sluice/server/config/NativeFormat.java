package dev.sluice.server.config;

import dev.sluice.Rule;
import java.util.List;

/** Reads one file of the native format ({@code limits:}) into rules. */
@FunctionalInterface
public interface NativeFormat {

  /**
   * @param file the name used in error messages
   * @throws InvalidConfigException naming file, line and column of what is wrong
   */
  List<Rule> parse(String file, String text) throws InvalidConfigException;
}
