package dev.sluice.config;

import dev.sluice.Attribute;
import dev.sluice.policy.ListKind;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.config.yaml.YamlTree;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Loads the native YAML configuration:
 *
 * <pre>{@code
 * limits:
 *   - name: auth.createToken
 *     config:
 *       - limit: 20
 *         period: 60
 *       - limit: 5
 *         period: 3
 * }</pre>
 *
 * <p>A path is a file, or a directory whose {@code *.yaml} and {@code *.yml} files (not hidden,
 * not in subdirectories) are read in name order and form one configuration. Every problem in every
 * file is reported, with file, line and column, in one {@link ConfigException}; a configuration
 * with any error loads nothing. Lint warnings come with a configuration that loaded.
 *
 * <p>Other formats (the service reads Envoy's, whose files have a top-level {@code domain}) are
 * told apart by {@link #topLevelKeys}; {@link #files} and {@link #merge} let a caller mix them.
 */
public final class ConfigLoader {
  /** The top-level key of a native configuration file. */
  public static final String NATIVE_KEY = NativeReader.ROOT_KEY;

  /**
   * Every top-level key of a native file: {@code limits}, {@code operations}, {@code attributes},
   * {@code tiers}.
   */
  public static final List<String> NATIVE_KEYS = NativeReader.ROOT_FIELDS;

  /**
   * The deepest nesting of YAML values (mappings and lists) a configuration file may have. Files
   * need a few levels; the bound keeps a hostile file from exhausting the reader's stack.
   */
  public static final int MAX_NESTING = YamlTree.MAX_DEPTH;
  /**
   * The largest configuration file read: 4 MiB. A thousand rules take about 100 KB; a file far
   * larger is a mistake (a log or a dump given as configuration), and reading and parsing it would
   * cost the service heap and CPU, at start and on every reload. Its size is checked before its
   * bytes are read.
   */
  public static final long MAX_FILE_BYTES = 4L * 1024 * 1024;

  /** Unknown rules given a "did you mean" each: finding one reads every rule name. */
  private static final int MAX_SUGGESTIONS = 20;

  private static final Pattern SECONDS = Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?");

  private ConfigLoader() {}

  /** Loads a native configuration file, or a directory of them. */
  public static LoadedConfig load(Path path) throws ConfigException {
    List<LoadedConfig> parts = new ArrayList<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (Path file : files(path)) {
      try {
        parts.add(parsePart(read(file), file.toString()));
      } catch (ConfigException e) {
        problems.addAll(e.problems());
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    return merge(parts);
  }

  /**
   * Parses native configuration text.
   *
   * @param name the file name used in problems
   */
  public static LoadedConfig parse(String source, String name) throws ConfigException {
    return merge(List.of(parsePart(source, name)));
  }

  /**
   * Parses native configuration text that is one file of several: its operations are not yet
   * checked against the rules (they may name rules of other files) and not yet in its rule set;
   * {@link #merge} does both.
   *
   * @param name the file name used in problems
   */
  public static LoadedConfig parsePart(String source, String name) throws ConfigException {
    return NativeReader.read(source, name);
  }

  /**
   * As {@link #parsePart(String, String)}, for a caller that reads more of the file itself (the
   * service reads its {@code rlqs} section): the top-level keys {@code otherKeys} are skipped
   * rather than refused as unknown, and a file holding only them is not missing its rules.
   */
  public static LoadedConfig parsePart(String source, String name, List<String> otherKeys) throws ConfigException {
    return NativeReader.read(source, name, otherKeys);
  }

  /**
   * The configuration files at {@code path}: the path itself if it is a file; for a directory,
   * its {@code *.yaml} and {@code *.yml} files in name order, skipping hidden entries (editor
   * backups, Kubernetes' {@code ..data} links) and subdirectories.
   *
   * @throws ConfigException if the path does not exist, or a directory holds no such file
   */
  public static List<Path> files(Path path) throws ConfigException {
    if (!Files.exists(path)) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(path.toString()), "no such file or directory"));
    }
    if (!Files.isDirectory(path)) {
      return List.of(path);
    }
    List<Path> out;
    try (Stream<Path> s = Files.list(path)) {
      out = s.filter(p -> {
        String n = p.getFileName().toString();
        return !n.startsWith(".") && (n.endsWith(".yaml") || n.endsWith(".yml")) && Files.isRegularFile(p);
      }).sorted().toList();
    } catch (IOException e) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(path.toString()), "cannot list: " + e));
    }
    if (out.isEmpty()) {
      throw new ConfigException(
          ConfigProblem.at(ConfigLocation.of(path.toString()), "the directory holds no *.yaml or *.yml file"));
    }
    return out;
  }

  /** The text of {@code file}, which must be UTF-8 and hold at most {@link #MAX_FILE_BYTES}. */
  public static String read(Path file) throws ConfigException {
    return read(file, MAX_FILE_BYTES);
  }

  /**
   * The text of {@code file}, which must be UTF-8 and hold at most {@code maxBytes}: its size is
   * checked before it is read, and no more than that is read if it grows meanwhile.
   */
  public static String read(Path file, long maxBytes) throws ConfigException {
    try {
      long size = Files.size(file);
      if (size > maxBytes) {
        throw tooLarge(file, size, maxBytes);
      }
      byte[] bytes;
      try (InputStream in = Files.newInputStream(file)) {
        bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
      }
      if (bytes.length > maxBytes) {
        throw tooLarge(file, Math.max(bytes.length, Files.size(file)), maxBytes);
      }
      return YamlTree.stripBom(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString());
    } catch (CharacterCodingException e) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(file.toString()), "not valid UTF-8"));
    } catch (NoSuchFileException e) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(file.toString()), "no such file"));
    } catch (IOException e) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(file.toString()), "cannot read: " + e));
    }
  }

  private static ConfigException tooLarge(Path file, long size, long maxBytes) {
    return new ConfigException(ConfigProblem.at(ConfigLocation.of(file.toString()), "the file holds "
        + bytes(size) + "; a configuration file may hold at most " + bytes(maxBytes) + " (not read)"));
  }

  /** {@code 4 MiB (4,194,304 bytes)}, or {@code 1,234 bytes} when not a whole number of KiB or MiB. */
  public static String bytes(long n) {
    String exact = String.format(java.util.Locale.ROOT, "%,d bytes", n);
    if (n >= 1024 * 1024 && n % (1024 * 1024) == 0) {
      return (n / (1024 * 1024)) + " MiB (" + exact + ")";
    }
    if (n >= 1024 && n % 1024 == 0) {
      return (n / 1024) + " KiB (" + exact + ")";
    }
    return exact;
  }

  /**
   * The keys of the top-level mapping of a YAML text, in order (empty if the top level is not a
   * mapping): {@code limits} for a native file, {@code domain} for an Envoy one.
   *
   * @throws ConfigException if the text is not YAML
   */
  public static List<String> topLevelKeys(String source, String name) throws ConfigException {
    return YamlTree.topLevelKeys(source, name);
  }

  /** Whether {@code file} is in the native format: its top-level mapping has {@code limits}. */
  public static boolean isNative(Path file) throws ConfigException {
    return topLevelKeys(read(file), file.toString()).contains(NATIVE_KEY);
  }

  /**
   * A duration written as this format writes {@code period} and {@code max_wait}, for readers of
   * other formats and for command lines, which share its syntax: a number of seconds ({@code 60},
   * {@code 0.5}), number-unit parts ({@code 500ms}, {@code 3s}, {@code 1m30s}; units us, ms, s, m,
   * h, d) or ISO-8601 ({@code PT1M}). Exact to the microsecond; at most ten years. The sign is
   * kept, so that the caller can say which range its value allows.
   *
   * @param what names the value in messages ({@code "period"}, {@code "--poll-interval"})
   * @throws IllegalArgumentException naming {@code what} if {@code text} is not such a duration
   */
  public static Duration parseDuration(String text, String what) {
    String t = text.strip();
    // Here a number is seconds even as text: only the native reader, which sees YAML's types,
    // can tell a quoted "60" (likely a mistake) from 60.
    long micros = SECONDS.matcher(t).matches()
        ? Durations.ofSeconds(seconds(t, what), what, t)
        : Durations.parse(t, what);
    return Duration.ofNanos(micros * 1000);
  }

  private static BigDecimal seconds(String t, String what) {
    try {
      return new BigDecimal(t);
    } catch (NumberFormatException e) {
      // An exponent beyond an int: no duration is that long, or that short.
      throw new IllegalArgumentException(what + " " + t + " is out of range; expected " + Durations.SYNTAX);
    }
  }

  /**
   * One configuration from several: rules in order, warnings concatenated, the operations of
   * every part over the rules of all of them, the tiers of every part, and each rule's access
   * lists (from the rule's own file). Warns of a rule that audits an attribute that no operation
   * over the rule names.
   *
   * @throws ConfigException if two parts define the same rule name, operation name, attribute or
   *     tier, naming both places, or an operation names a rule that no part defines, at the item's
   *     rule
   */
  public static LoadedConfig merge(List<LoadedConfig> parts) throws ConfigException {
    List<Rule> rules = new ArrayList<>();
    List<ConfigProblem> warnings = new ArrayList<>();
    Map<String, ConfigLocation> origins = new LinkedHashMap<>();
    Map<String, Rule> seen = new HashMap<>();
    List<ConfigProblem> problems = new ArrayList<>();
    for (LoadedConfig part : parts) {
      for (Rule r : part.rules().rules()) {
        ConfigLocation at = part.origin(r.name());
        if (seen.putIfAbsent(r.name(), r) != null) {
          ConfigLocation first = origins.get(r.name());
          problems.add(ConfigProblem.at(at != null ? at : ConfigLocation.of("?"), "duplicate rule name '" + r.name()
              + "' (first defined at " + (first != null ? first : "another file") + ")"));
          continue;
        }
        rules.add(r);
        if (at != null) {
          origins.put(r.name(), at);
        }
      }
      warnings.addAll(part.warnings());
    }
    Map<String, List<Window>> tiers = new LinkedHashMap<>();
    Map<String, ConfigLocation> tierOrigins = new LinkedHashMap<>();
    Map<String, List<String>> allow = new LinkedHashMap<>();
    Map<String, List<String>> deny = new LinkedHashMap<>();
    Map<String, ConfigLocation> auditOrigins = new LinkedHashMap<>();
    for (LoadedConfig part : parts) {
      part.tiers().forEach((name, windows) -> {
        ConfigLocation at = part.tierOrigin(name);
        if (tiers.containsKey(name)) {
          ConfigLocation first = tierOrigins.get(name);
          problems.add(ConfigProblem.at(at != null ? at : ConfigLocation.of("?"), "duplicate tier name '" + name
              + "' (first defined at " + (first != null ? first : "another file") + ")"));
          return;
        }
        tiers.put(name, windows);
        if (at != null) {
          tierOrigins.put(name, at);
        }
      });
      // A rule's lists come with it from its own file; a duplicate rule was reported above.
      for (Rule r : part.rules().rules()) {
        if (seen.get(r.name()) != r) {
          continue;
        }
        List<String> a = part.allow().get(r.name());
        if (a != null) {
          allow.put(r.name(), a);
        }
        List<String> d = part.deny().get(r.name());
        if (d != null) {
          deny.put(r.name(), d);
        }
        ConfigLocation auditAt = part.auditOrigins().get(r.name());
        if (auditAt != null) {
          auditOrigins.put(r.name(), auditAt);
        }
      }
    }
    if (rules.size() > RuleSet.MAX_RULES) {
      // Here, to name the place: RuleSet.of refuses them too, without one.
      over(rules.size(), RuleSet.MAX_RULES, "rules", origins.values(), problems);
      throw new ConfigException(problems);
    }
    RuleSet ruleSet = RuleSet.of(rules);
    List<Operation> operations = new ArrayList<>();
    Map<String, List<ConfigLocation>> operationOrigins = new LinkedHashMap<>();
    List<Attribute> attributes = new ArrayList<>();
    Map<String, ConfigLocation> attributeOrigins = new LinkedHashMap<>();
    Set<String> operationNames = new HashSet<>();
    Set<String> attributeNames = new HashSet<>();
    int[] suggestions = {MAX_SUGGESTIONS};
    for (LoadedConfig part : parts) {
      for (Attribute a : part.attributes()) {
        ConfigLocation at = part.attributeOrigins().get(a.name());
        ConfigLocation first = attributeOrigins.get(a.name());
        if (!attributeNames.add(a.name())) {
          problems.add(ConfigProblem.at(at != null ? at : ConfigLocation.of("?"), "attribute '" + a.name()
              + "' is declared twice (first at " + (first != null ? first : "another file") + ")"));
          continue;
        }
        attributes.add(a);
        if (at != null) {
          attributeOrigins.put(a.name(), at);
        }
      }
      for (Operation op : part.operations()) {
        List<ConfigLocation> at = part.operationOrigins().get(op.name());
        ConfigLocation nameAt = at != null ? at.get(0) : ConfigLocation.of("?");
        List<ConfigLocation> firstAt = operationOrigins.get(op.name());
        // A set, not a scan of the operations so far: a scan made merging quadratic (100,000
        // operations in three files took about a minute).
        if (!operationNames.add(op.name())) {
          problems.add(ConfigProblem.at(nameAt, "duplicate operation name '" + op.name() + "' (first defined at "
              + (firstAt != null ? firstAt.get(0) : "another file") + ")"));
          continue;
        }
        boolean ok = true;
        for (int i = 0; i < op.items().size(); i++) {
          String rule = op.items().get(i).rule();
          if (ruleSet.get(rule) == null) {
            ok = false;
            ConfigLocation ruleAt = at != null && at.size() > i + 1 ? at.get(i + 1) : nameAt;
            problems.add(ConfigProblem.at(ruleAt, "operation '" + op.name() + "', item " + (i + 1) + ": unknown rule '"
                + rule + "'" + (suggestions[0]-- > 0 ? suggestion(rule, ruleSet) : "")));
          }
        }
        if (ok) {
          operations.add(op);
          if (at != null) {
            operationOrigins.put(op.name(), at);
          }
        }
      }
    }
    over(operations.size(), RuleSet.MAX_OPERATIONS, "operations",
        operationOrigins.values().stream().map(l -> l.get(0)).toList(), problems);
    over(attributes.size(), RuleSet.MAX_ATTRIBUTES, "attributes", attributeOrigins.values(), problems);
    for (Map<String, List<String>> lists : List.of(allow, deny)) {
      long entries = lists.values().stream().mapToLong(List::size).sum();
      if (entries > RuleSet.MAX_LIST_ENTRIES_TOTAL) {
        problems.add(ConfigProblem.at(ConfigLocation.of("?"), "the " + (lists == allow ? "allow" : "deny")
            + " lists of all rules hold " + entries + " entries together; the maximum is "
            + RuleSet.MAX_LIST_ENTRIES_TOTAL));
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    if (tiers.size() > RuleSet.MAX_TIERS) {
      throw new ConfigException(ConfigProblem.at(tierOrigins.values().stream().skip(RuleSet.MAX_TIERS).findFirst()
          .orElse(ConfigLocation.of("?")), "the files define " + tiers.size() + " tiers; the maximum is "
          + RuleSet.MAX_TIERS));
    }
    warnings.addAll(auditWarnings(ruleSet, operations, auditOrigins));
    RuleSet full = ruleSet.withTiers(tiers).withList(ListKind.ALLOW, allow).withList(ListKind.DENY, deny);
    if (!operations.isEmpty() || !attributes.isEmpty()) {
      full = full.withOperations(operations, attributes);
    }
    return new LoadedConfig(full, warnings, origins, operations, attributes, operationOrigins, attributeOrigins, tiers,
        tierOrigins, allow, deny, auditOrigins);
  }

  /** Adds a problem at the first of {@code origins} beyond {@code max} if there are more than that. */
  private static void over(int count, int max, String what, java.util.Collection<ConfigLocation> origins,
      List<ConfigProblem> problems) {
    if (count > max) {
      ConfigLocation at = origins.stream().skip(max).findFirst().orElse(ConfigLocation.of("?"));
      problems.add(ConfigProblem.at(at, "the files define " + count + " " + what + "; the maximum is " + max));
    }
  }

  /**
   * A warning for each rule that audits an attribute no operation over it names (in an item's
   * key, {@code when} or {@code unless}): only operations carry attributes, and one that does not
   * name it likely does not receive it.
   */
  private static List<ConfigProblem> auditWarnings(RuleSet rules, List<Operation> operations,
      Map<String, ConfigLocation> auditOrigins) {
    // Each operation is read once, for the audited rules its items name (not each rule against
    // every operation: that was quadratic in a large configuration).
    Map<String, List<String>> over = new HashMap<>();
    Set<String> named = new HashSet<>();
    for (Operation op : operations) {
      Set<String> audited = new HashSet<>();
      for (OperationItem it : op.items()) {
        Rule r = rules.get(it.rule());
        if (r != null && r.audit() != null && audited.add(r.name())) {
          List<String> ops = over.computeIfAbsent(r.name(), k -> new ArrayList<>());
          if (ops.size() < 4) {
            ops.add(op.name());
          }
          String attribute = r.audit().attribute();
          for (OperationItem other : op.items()) {
            if (attribute.equals(other.when()) || attribute.equals(other.unless())
                || other.placeholders().contains(attribute)) {
              named.add(r.name());
              break;
            }
          }
        }
      }
    }
    List<ConfigProblem> out = new ArrayList<>();
    for (Rule r : rules.rules()) {
      if (r.audit() == null) {
        continue;
      }
      String attribute = r.audit().attribute();
      ConfigLocation at = auditOrigins.getOrDefault(r.name(), ConfigLocation.of("?"));
      List<String> ops = over.getOrDefault(r.name(), List.of());
      if (ops.isEmpty()) {
        out.add(ConfigProblem.at(at, "rule '" + r.name() + "' audits attribute '" + attribute + "', but no operation "
            + "has an item of this rule; only requests made through an operation carry attributes, so nothing "
            + "would be recorded"));
      } else if (!named.contains(r.name())) {
        out.add(ConfigProblem.at(at, "rule '" + r.name() + "' audits attribute '" + attribute + "', which no operation"
            + " over it names (" + String.join(", ", ops.subList(0, Math.min(3, ops.size())))
            + (ops.size() > 3 ? ", ..." : "") + "); requests that lack it are not recorded"));
      }
    }
    return out;
  }

  /** " (did you mean 'x'?)" for a rule name close to {@code rule}, or "". */
  private static String suggestion(String rule, RuleSet rules) {
    for (Rule r : rules.rules()) {
      // A typo is a small part of a name: "a" is no misspelling of "b".
      if (FieldReader.distance(r.name(), rule) <= Math.min(2, rule.length() / 2)) {
        return " (did you mean '" + r.name() + "'?)";
      }
    }
    return rules.size() == 0 ? " (no rule is defined)" : "";
  }
}
