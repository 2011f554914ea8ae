package dev.sluice.spring;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import dev.sluice.config.envoy.EnvoyConfigParser;
import dev.sluice.config.envoy.EnvoyDomain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Where an application's rules come from: {@code sluice.rules} (inline native YAML) and
 * {@code sluice.config} (a file or a directory of them, each native or Envoy's format, told apart
 * by its top-level key as {@code sluice serve} tells them), merged as the files of one directory
 * are: a rule, operation or Envoy domain defined twice is an error, and nothing half-loads.
 */
final class RuleSources {
  static final String INLINE = "sluice.rules";

  private final String inline;
  private final Path config;

  RuleSources(String inline, String config) {
    this.inline = inline == null || inline.isBlank() ? null : inline;
    this.config = config == null || config.isBlank() ? null : Path.of(config);
  }

  Path config() {
    return config;
  }

  boolean isEmpty() {
    return inline == null && config == null;
  }

  /** The texts of every source, in load order: the inline rules, then the files. */
  Map<String, String> read() throws ConfigException {
    Map<String, String> texts = new LinkedHashMap<>();
    if (inline != null) {
      texts.put(INLINE, inline);
    }
    if (config != null) {
      List<ConfigProblem> problems = new ArrayList<>();
      for (Path file : ConfigLoader.files(config)) {
        try {
          texts.put(file.toString(), ConfigLoader.read(file));
        } catch (ConfigException e) {
          problems.addAll(e.problems());
        }
      }
      if (!problems.isEmpty()) {
        throw new ConfigException(problems);
      }
    }
    return texts;
  }

  /** The rules of every source, and the Envoy domains of its Envoy files by name. */
  record Loaded(LoadedConfig config, Map<String, EnvoyDomain> domains) {
    Loaded {
      domains = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(domains));
    }
  }

  /** Parses texts as {@link #read} returns them. */
  static Loaded load(Map<String, String> texts) throws ConfigException {
    List<LoadedConfig> parts = new ArrayList<>();
    Map<String, EnvoyDomain> domains = new LinkedHashMap<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (Map.Entry<String, String> e : texts.entrySet()) {
      try {
        List<String> keys = ConfigLoader.topLevelKeys(e.getValue(), e.getKey());
        if (keys.contains("domain") || keys.contains("descriptors")) {
          if (e.getKey().equals(INLINE)) {
            throw new ConfigException(ConfigProblem.at(new ConfigLocation(INLINE, 1, 1), "an Envoy rate limit "
                + "configuration ('domain:'): sluice.rules takes native YAML; put Envoy files in sluice.config"));
          }
          if (keys.stream().anyMatch(ConfigLoader.NATIVE_KEYS::contains)) {
            throw new ConfigException(ConfigProblem.at(new ConfigLocation(e.getKey(), 1, 1), "the file has "
                + "top-level keys of several formats ('" + ConfigLoader.NATIVE_KEY + "', 'domain'); put each "
                + "format in its own file"));
          }
          EnvoyDomain d = EnvoyConfigParser.parse(e.getKey(), e.getValue());
          EnvoyDomain before = domains.putIfAbsent(d.domain(), d);
          if (before != null) {
            throw new ConfigException(ConfigProblem.at(d.location(), "duplicate domain '" + d.domain()
                + "' (also in " + before.file() + "); put a domain's descriptors in one file"));
          }
          parts.add(d.asLoadedConfig());
        } else {
          parts.add(ConfigLoader.parsePart(e.getValue(), e.getKey()));
        }
      } catch (ConfigException x) {
        problems.addAll(x.problems());
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    return new Loaded(ConfigLoader.merge(parts), domains);
  }

  /**
   * What polling compares: each configuration file's size, modification time and identity, read
   * without its bytes; empty without {@code sluice.config}.
   */
  Map<Path, List<Object>> stamps() throws ConfigException {
    Map<Path, List<Object>> stamps = new LinkedHashMap<>();
    if (config == null) {
      return stamps;
    }
    for (Path file : ConfigLoader.files(config)) {
      try {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        stamps.put(file, java.util.Arrays.asList(a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS), a.fileKey()));
      } catch (IOException e) {
        // Gone between the listing and now: a change, which reading reports.
        stamps.put(file, List.of(-1L));
      }
    }
    return stamps;
  }

  /** Every problem of {@code e}, one per line, with file, line and column. */
  static String describe(ConfigException e) {
    StringBuilder b = new StringBuilder();
    for (ConfigProblem p : e.problems()) {
      if (b.length() > 0) {
        b.append('\n');
      }
      b.append(p);
    }
    return b.toString();
  }
}
