package dev.sluice.server.config;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.server.envoy.EnvoyConfigParser;
import dev.sluice.server.envoy.EnvoyDomain;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Reads the service's configuration: one file, or every {@code .yaml} / {@code .yml} file of a
 * directory (not its subdirectories; names starting with {@code .} are skipped, as editors keep
 * their temporary files there), in name order. Each file is native ({@code limits:} at the top)
 * or Envoy's format ({@code domain:}). Nothing half-loads: any error fails the whole load.
 */
public final class ConfigFiles {
  private final NativeFormat nativeFormat;

  public ConfigFiles(NativeFormat nativeFormat) {
    this.nativeFormat = nativeFormat;
  }

  /** The files {@code path} stands for, in load order. */
  public static List<Path> list(Path path) throws InvalidConfigException {
    if (Files.isDirectory(path)) {
      try (Stream<Path> s = Files.list(path)) {
        return s.filter(p -> {
          String n = p.getFileName().toString();
          return !n.startsWith(".") && (n.endsWith(".yaml") || n.endsWith(".yml")) && Files.isRegularFile(p);
        }).sorted().toList();
      } catch (IOException e) {
        throw new InvalidConfigException(path + ": cannot list the directory: " + e.getMessage(), e);
      }
    }
    if (!Files.exists(path)) {
      throw new InvalidConfigException(path + ": no such file or directory");
    }
    return List.of(path);
  }

  /** Reads every file of {@code path}; see the class comment. */
  public ServiceConfig load(Path path) throws InvalidConfigException {
    Map<Path, byte[]> contents = new LinkedHashMap<>();
    for (Path f : list(path)) {
      contents.put(f, read(f));
    }
    return load(contents);
  }

  /** Builds the configuration from files already read. */
  public ServiceConfig load(Map<Path, byte[]> contents) throws InvalidConfigException {
    List<Rule> rules = new ArrayList<>();
    Map<String, String> ruleFile = new LinkedHashMap<>();
    Map<String, EnvoyDomain> domains = new LinkedHashMap<>();
    List<SourceFile> sources = new ArrayList<>();
    for (Map.Entry<Path, byte[]> e : contents.entrySet()) {
      String file = e.getKey().toString();
      String text = decode(file, e.getValue());
      YamlNode root = YamlNode.parse(file, text);
      if (root.kind() != YamlNode.Kind.MAP) {
        throw root.error("a configuration file must be a mapping with 'limits:' (native) or 'domain:' (Envoy) at the top");
      }
      Map<String, YamlNode> top = root.asMap("file");
      boolean isNative = top.containsKey("limits");
      boolean isEnvoy = top.containsKey("domain");
      if (isNative == isEnvoy) {
        throw root.error(isNative
            ? "a file has either 'limits:' (native) or 'domain:' (Envoy) at the top, not both"
            : "a configuration file needs 'limits:' (native) or 'domain:' (Envoy) at the top");
      }
      List<Rule> fileRules;
      String domain = null;
      if (isEnvoy) {
        EnvoyDomain d = EnvoyConfigParser.parse(root);
        EnvoyDomain before = domains.putIfAbsent(d.domain(), d);
        if (before != null) {
          throw top.get("domain").error("duplicate domain '" + d.domain() + "' (also in " + before.file() + ")");
        }
        fileRules = d.rules();
        domain = d.domain();
      } else {
        fileRules = nativeFormat.parse(file, text);
      }
      List<String> names = new ArrayList<>();
      for (Rule r : fileRules) {
        String other = ruleFile.putIfAbsent(r.name(), file);
        if (other != null) {
          throw new InvalidConfigException(file + ": duplicate rule name '" + r.name() + "' (also in " + other + ")");
        }
        rules.add(r);
        names.add(r.name());
      }
      sources.add(new SourceFile(file, isEnvoy ? "envoy" : "native", version(e.getValue()), names, domain));
    }
    return new ServiceConfig(RuleSet.of(rules), domains, sources);
  }

  static byte[] read(Path f) throws InvalidConfigException {
    try {
      return Files.readAllBytes(f);
    } catch (IOException e) {
      throw new InvalidConfigException(f + ": cannot be read: " + e.getMessage(), e);
    }
  }

  private static String decode(String file, byte[] bytes) throws InvalidConfigException {
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new InvalidConfigException(file + ": not UTF-8 text");
    }
  }

  /** The first 12 hex digits of the SHA-256 of {@code bytes}. */
  static String version(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
