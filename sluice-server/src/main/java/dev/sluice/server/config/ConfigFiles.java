package dev.sluice.server.config;

import dev.sluice.Rule;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import dev.sluice.config.envoy.EnvoyConfigParser;
import dev.sluice.config.envoy.EnvoyDomain;
import dev.sluice.server.rlqs.RlqsConfig;
import dev.sluice.server.rlqs.RlqsConfigReader;
import dev.sluice.server.rlqs.RlqsDomain;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Reads a configuration as {@code serve}, {@code check-config} and {@code replay} all do: one
 * file, or the {@code *.yaml} / {@code *.yml} files of a directory in name order (as
 * {@link ConfigLoader#files} lists them). Each file is native ({@code limits:} at the top, read by
 * {@link ConfigLoader}) or Envoy's format ({@code domain:}, read by {@link EnvoyConfigParser}),
 * told apart by that key. A native file may also hold an {@code rlqs:} section, read by
 * {@link RlqsConfigReader}. The problems of every file are reported together; rule names, Envoy
 * domains and rlqs domains must be unique across files. Nothing half-loads.
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

  /**
   * The most bytes the files of a directory may hold together: 16 MiB, four files of the largest
   * size ({@link ConfigLoader#MAX_FILE_BYTES}).
   */
  public static final long MAX_TOTAL_BYTES = 4 * ConfigLoader.MAX_FILE_BYTES;

  /**
   * A file as polling sees it without reading it: its size, when it was last modified and which
   * file it is (a config map's symbolic link swapped to a new file changes it).
   */
  public record Stamp(long size, long modifiedNanos, Object fileKey) {}

  /**
   * The text of every file {@code path} stands for, in load order. Sizes are checked before any
   * byte is read: a file over {@link ConfigLoader#MAX_FILE_BYTES}, or a directory whose files
   * hold more than {@link #MAX_TOTAL_BYTES} together, is an error naming it and the bound.
   */
  public static Map<Path, String> read(Path path) throws ConfigException {
    List<Path> files = ConfigLoader.files(path);
    List<ConfigProblem> problems = new ArrayList<>();
    long total = 0;
    for (Path file : files) {
      long size = size(file);
      total += Math.max(0, size);
      if (size > ConfigLoader.MAX_FILE_BYTES) {
        problems.add(ConfigProblem.at(ConfigLocation.of(file.toString()), "the file holds "
            + ConfigLoader.bytes(size) + "; a configuration file may hold at most "
            + ConfigLoader.bytes(ConfigLoader.MAX_FILE_BYTES) + " (not read)"));
      }
    }
    if (problems.isEmpty() && total > MAX_TOTAL_BYTES) {
      problems.add(ConfigProblem.at(ConfigLocation.of(path.toString()), "the directory's " + files.size()
          + " configuration files hold " + ConfigLoader.bytes(total) + " together; they may hold at most "
          + ConfigLoader.bytes(MAX_TOTAL_BYTES) + " (none read)"));
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    Map<Path, String> texts = new LinkedHashMap<>();
    for (Path file : files) {
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

  /** The stamp of every file {@code path} stands for, read without their bytes. */
  public static Map<Path, Stamp> stamps(Path path) throws ConfigException {
    Map<Path, Stamp> stamps = new LinkedHashMap<>();
    for (Path file : ConfigLoader.files(path)) {
      Stamp st;
      try {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        st = new Stamp(a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS), a.fileKey());
      } catch (IOException e) {
        // Gone between the listing and now: a change, which reading will report.
        st = new Stamp(-1, 0, null);
      }
      stamps.put(file, st);
    }
    return stamps;
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      // Reading it reports why.
      return -1;
    }
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
    List<RlqsDomain> rlqs = new ArrayList<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (Map.Entry<Path, String> e : texts.entrySet()) {
      String file = e.getKey().toString();
      String text = e.getValue();
      try {
        LoadedConfig part;
        String domain = null;
        List<String> keys = ConfigLoader.topLevelKeys(text, file);
        if (isEnvoy(keys, file)) {
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
          List<ConfigProblem> partProblems = new ArrayList<>();
          LoadedConfig p = null;
          try {
            p = ConfigLoader.parsePart(text, file, List.of(RlqsConfigReader.KEY));
          } catch (ConfigException x) {
            partProblems.addAll(x.problems());
          }
          if (keys.contains(RlqsConfigReader.KEY)) {
            try {
              rlqs.addAll(RlqsConfigReader.read(text, file));
            } catch (ConfigException x) {
              partProblems.addAll(x.problems());
            }
          }
          if (!partProblems.isEmpty()) {
            throw new ConfigException(partProblems);
          }
          part = p;
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
    RlqsConfig rlqsConfig = RlqsConfig.merge(rlqs, all.rules(), problems);
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    return new ServiceConfig(all.rules(), all.warnings(), all.origins(), domains, sources, rlqsConfig);
  }

  /** Whether a file is in Envoy's format rather than the native one, by its top-level keys. */
  private static boolean isEnvoy(List<String> keys, String file) throws ConfigException {
    boolean isNative = keys.stream().anyMatch(ConfigLoader.NATIVE_KEYS::contains)
        || keys.contains(RlqsConfigReader.KEY);
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
    return digest(text).substring(0, 12);
  }

  /** The SHA-256 of {@code text} in UTF-8, in hex. */
  static String digest(String text) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
