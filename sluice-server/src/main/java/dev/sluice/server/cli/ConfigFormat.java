package dev.sluice.server.cli;

import dev.sluice.config.ConfigException;
import dev.sluice.config.LoadedConfig;

/**
 * A configuration file format, recognised by a key at the top level of the file: {@code limits}
 * for the native format, {@code domain} for Envoy's. {@link ConfigFiles} reads each file with the
 * format whose key it has.
 */
public interface ConfigFormat {

  /** The top-level key that marks a file of this format. */
  String topLevelKey();

  /**
   * Reads one file of this format.
   *
   * @param fileName the name used in problems
   * @throws ConfigException listing every problem with file, line and column
   */
  LoadedConfig parse(String source, String fileName) throws ConfigException;
}
