package dev.sluice.server.config;

import java.util.List;

/**
 * One configuration file in force.
 *
 * @param file its path as given
 * @param format {@code native} or {@code envoy}
 * @param version the first 12 hex digits of the SHA-256 of its text in UTF-8 (its bytes, but for a
 *     byte order mark): changes with its content
 * @param rules the names of the rules it defines
 * @param domain for an Envoy file, its domain; else null
 */
public record SourceFile(String file, String format, String version, List<String> rules, String domain) {
  public SourceFile {
    rules = List.copyOf(rules);
  }
}
