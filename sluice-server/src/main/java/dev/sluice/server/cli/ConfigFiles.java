package dev.sluice.server.cli;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import dev.sluice.server.envoy.EnvoyConfigFormat;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Loads a configuration path (a file, or a directory of {@code *.yaml}/{@code *.yml} files) whose
 * files may be of different formats, each told apart by its top-level key. All files' problems
 * are reported together; rule names must be unique across files.
 */
public final class ConfigFiles {
  /** The formats the command reads, the native one first. */
  private static final List<ConfigFormat> FORMATS = List.of(new NativeFormat(), new EnvoyConfigFormat());

  private ConfigFiles() {}

  public static List<ConfigFormat> formats() {
    return FORMATS;
  }

  public static LoadedConfig load(Path path) throws ConfigException {
    return load(path, FORMATS);
  }

  /** Loads {@code path} reading each file with the one of {@code formats} whose key it has. */
  public static LoadedConfig load(Path path, List<ConfigFormat> formats) throws ConfigException {
    List<LoadedConfig> parts = new ArrayList<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (Path file : ConfigLoader.files(path)) {
      String name = file.toString();
      try {
        String source = ConfigLoader.read(file);
        parts.add(formatOf(source, name, formats).parse(source, name));
      } catch (ConfigException e) {
        problems.addAll(e.problems());
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    return ConfigLoader.merge(parts);
  }

  /**
   * The format of a file by its top-level keys. A file with no known key goes to the first
   * format, whose reader then says what is missing or unknown.
   */
  static ConfigFormat formatOf(String source, String name, List<ConfigFormat> formats) throws ConfigException {
    List<String> keys = ConfigLoader.topLevelKeys(source, name);
    List<ConfigFormat> matching = formats.stream().filter(f -> keys.contains(f.topLevelKey())).toList();
    if (matching.size() > 1) {
      throw new ConfigException(ConfigProblem.at(new ConfigLocation(name, 1, 1), "the file has top-level keys of "
          + "several formats (" + matching.stream().map(f -> "'" + f.topLevelKey() + "'")
          .collect(Collectors.joining(", ")) + "); put each format in its own file"));
    }
    return matching.isEmpty() ? formats.get(0) : matching.get(0);
  }
}
