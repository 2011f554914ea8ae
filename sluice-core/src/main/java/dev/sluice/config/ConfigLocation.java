package dev.sluice.config;

import java.util.Objects;

/**
 * A place in a configuration file. Lines and columns count from 1; 0 means the whole file (an
 * unreadable file, an empty directory).
 */
public record ConfigLocation(String file, int line, int column) {

  public ConfigLocation {
    Objects.requireNonNull(file, "file");
  }

  /** The whole of {@code file}. */
  public static ConfigLocation of(String file) {
    return new ConfigLocation(file, 0, 0);
  }

  /** {@code file:line:column}, or just {@code file} for the whole file. */
  @Override
  public String toString() {
    return line > 0 ? file + ":" + line + ":" + column : file;
  }
}
