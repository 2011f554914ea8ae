package dev.sluice.server.config;

import dev.sluice.Rule;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import dev.sluice.server.envoy.EnvoyConfigParser;
import dev.sluice.server.envoy.EnvoyDomain;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a configuration as {@code serve}, {@code check-config} and {@code replay} all do: one
 * file, or the {@code *.yaml} / {@code *.yml} files of a directory in name order (as
 * {@link ConfigLoader#files} lists them). Each file is native ({@code limits:} at the top, read by
 * {@link ConfigLoader}) or Envoy's format ({@code domain:}, read by {@link EnvoyConfigParser}),
 * told apart by that key. The problems of every file are reported together; rule names and
 * Envoy domains must be unique across files. Nothing half-loads.
 */
public final class ConfigFiles {
  private static final String ENVOY_KEY = "domain";

  private ConfigFiles() {}

  /** Reads and loads {@code path}. */
  public static ServiceConfig load(Path path) throws ConfigException {
    return load(read(path));
  }

  /**
   * Reads and loads {@code path}.
   *
   * @param mergeEnvoyDomains whether Envoy files of the same domain are merged (Envoy's
   *     {@code MERGE_DOMAIN_CONFIG}) rather than refused
   */
  public static ServiceConfig load(Path path, boolean mergeEnvoyDomains) throws ConfigException {
    return load(read(path), mergeEnvoyDomains);
  }

  /** The text of every file {@code path} stands for, in load order. */
  public static Map<Path, String> read(Path path) throws ConfigException {
    Map<Path, String> texts = new LinkedHashMap<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (Path file : ConfigLoader.files(path)) {
      try {
        texts.put(file, ConfigLoader.read(file));
      } catch (ConfigException e) {
        problems.addAll(e.problems());
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    return texts;
  }

  /** Loads files already read, as {@link #read} returns them. */
  public static ServiceConfig load(Map<Path, String> texts) throws ConfigException {
    return load(texts, false);
  }

  /** Loads files already read, as {@link #read} returns them; domains merged or not. */
  public static ServiceConfig load(Map<Path, String> texts, boolean mergeEnvoyDomains) throws ConfigException {
    List<LoadedConfig> parts = new ArrayList<>();
    Map<String, EnvoyDomain> domains = new LinkedHashMap<>();
    List<SourceFile> sources = new ArrayList<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (Map.Entry<Path, String> e : texts.entrySet()) {
      String file = e.getKey().toString();
      String text = e.getValue();
      try {
        LoadedConfig part;
        String domain = null;
        if (isEnvoy(text, file)) {
          EnvoyDomain d = EnvoyConfigParser.parse(file, text);
          EnvoyDomain before = domains.putIfAbsent(d.domain(), d);
          if (before != null && mergeEnvoyDomains) {
            domains.put(d.domain(), before.merge(d));
          } else if (before != null) {
            throw new ConfigException(ConfigProblem.at(d.location(), "duplicate domain '" + d.domain()
                + "' (also in " + before.file() + "); serve and check-config --envoy-merge-domains merge such files"));
          }
          part = d.asLoadedConfig();
          domain = d.domain();
        } else {
          part = ConfigLoader.parsePart(text, file);
        }
        parts.add(part);
        List<String> names = part.rules().rules().stream().map(Rule::name).toList();
        sources.add(new SourceFile(file, domain == null ? "native" : "envoy", version(text), names, domain));
      } catch (ConfigException x) {
        problems.addAll(x.problems());
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    LoadedConfig all = ConfigLoader.merge(parts);
    return new ServiceConfig(all.rules(), all.warnings(), all.origins(), domains, sources);
  }

  /** Whether a file is in Envoy's format rather than the native one, by its top-level keys. */
  private static boolean isEnvoy(String text, String file) throws ConfigException {
    List<String> keys = ConfigLoader.topLevelKeys(text, file);
    boolean isNative = keys.stream().anyMatch(ConfigLoader.NATIVE_KEYS::contains);
    // A file of Envoy descriptors without its domain is Envoy's, to be told what it lacks.
    boolean isEnvoy = keys.contains(ENVOY_KEY) || keys.contains("descriptors");
    if (isNative && isEnvoy) {
      throw new ConfigException(ConfigProblem.at(new ConfigLocation(file, 1, 1), "the file has top-level keys of "
          + "several formats ('" + ConfigLoader.NATIVE_KEY + "', '" + ENVOY_KEY + "'); put each format in its own file"));
    }
    if (!isNative && !isEnvoy) {
      throw new ConfigException(ConfigProblem.at(new ConfigLocation(file, 1, 1), "a configuration file needs '"
          + ConfigLoader.NATIVE_KEY + ":' (native) or '" + ENVOY_KEY + ":' (Envoy) at the top"));
    }
    return isEnvoy;
  }

  /** The first 12 hex digits of the SHA-256 of {@code text} in UTF-8. */
  static String version(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).substring(0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
