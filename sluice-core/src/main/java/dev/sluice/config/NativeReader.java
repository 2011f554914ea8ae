package dev.sluice.config;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.YamlTree;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns one native YAML file into rules. Every field is checked against a whitelist and every
 * value against its type and range; all problems are collected, and a file with any problem
 * yields no rules at all. The file's top-level parts are read by {@link RuleReader} (rules and
 * tiers, with {@link PolicyReader} for their policies) and {@link OperationReader} (operations
 * and attributes), on the readers of {@link FieldReader}.
 */
final class NativeReader extends FieldReader {
  static final String ROOT_KEY = "limits";

  static final String OPERATIONS_KEY = "operations";
  static final String ATTRIBUTES_KEY = "attributes";
  static final String TIERS_KEY = "tiers";
  static final List<String> ROOT_FIELDS = List.of(ROOT_KEY, OPERATIONS_KEY, ATTRIBUTES_KEY, TIERS_KEY);

  private final RuleReader ruleReader;
  private final OperationReader operationReader;
  /** Top-level keys the caller reads from the same file itself; this reader skips them. */
  private final List<String> otherKeys;

  private NativeReader(String file, List<String> otherKeys) {
    super(new Problems(file));
    this.ruleReader = new RuleReader(problems);
    this.operationReader = new OperationReader(problems);
    this.otherKeys = List.copyOf(otherKeys);
  }

  static LoadedConfig read(String source, String file) throws ConfigException {
    return read(source, file, List.of());
  }

  static LoadedConfig read(String source, String file, List<String> otherKeys) throws ConfigException {
    return new NativeReader(file, otherKeys).read(source);
  }

  private LoadedConfig read(String source) throws ConfigException {
    String file = problems.file;
    List<ConfigProblem> errors = problems.errors;
    List<ConfigProblem> warnings = problems.warnings;
    Node root = YamlTree.parse(source, file, errors);
    List<Rule> rules = new ArrayList<>();
    if (root == null && errors.isEmpty()) {
      error(new ConfigLocation(file, 1, 1), "the file is empty; expected a '" + ROOT_KEY + "' list of rules");
    } else if (root != null) {
      readRoot(root, rules);
    }
    if (!errors.isEmpty()) {
      errors.sort(Comparator.comparingInt(ConfigProblem::line).thenComparingInt(ConfigProblem::column));
      throw new ConfigException(errors);
    }
    warnings.sort(Comparator.comparingInt(ConfigProblem::line).thenComparingInt(ConfigProblem::column));
    RuleReader r = ruleReader;
    OperationReader o = operationReader;
    return new LoadedConfig(RuleSet.of(rules), warnings, r.origins, o.operations, o.attributes, o.operationOrigins,
        o.attributeOrigins, r.tiers, r.tierOrigins, r.allow, r.deny, r.auditOrigins);
  }

  private void readRoot(Node root, List<Rule> rules) {
    if (!(root instanceof MapNode map)) {
      error(root.location(), "expected a mapping with a '" + ROOT_KEY + "' list, found " + root.describe());
      return;
    }
    Field domain = map.field("domain");
    if (domain != null && map.field(ROOT_KEY) == null) {
      error(domain.at(), "a top-level 'domain' marks an Envoy rate limit configuration, which the sluice service "
          + "reads; this loader reads the native format (a top-level '" + ROOT_KEY + "' list)");
      return;
    }
    List<String> expected = new ArrayList<>(ROOT_FIELDS);
    expected.addAll(otherKeys);
    checkFields(map, expected);
    Field limits = map.field(ROOT_KEY);
    if (limits == null && map.field(OPERATIONS_KEY) == null && map.field(ATTRIBUTES_KEY) == null
        && map.field(TIERS_KEY) == null && otherKeys.stream().noneMatch(k -> map.field(k) != null)) {
      missing(map, ROOT_KEY, ROOT_FIELDS, "missing '" + ROOT_KEY + "' (the list of rules)");
      return;
    }
    // A file may hold operations (and attributes) alone, over rules defined in other files; or
    // tiers alone.
    if (limits != null) {
      if (!(limits.value() instanceof ListNode list)) {
        error(limits.value().location(), "'" + ROOT_KEY + "' must be a list of rules, found " + limits.value().describe());
        return;
      }
      Map<String, ConfigLocation> names = new LinkedHashMap<>();
      for (int i = 0; i < list.items().size(); i++) {
        Rule r = ruleReader.readRule(list.items().get(i), i + 1, names);
        if (r != null) {
          rules.add(r);
        }
      }
    }
    Field attrs = map.field(ATTRIBUTES_KEY);
    if (attrs != null) {
      operationReader.readAttributes(attrs);
    }
    Field tf = map.field(TIERS_KEY);
    if (tf != null) {
      ruleReader.readTiers(tf);
    }
    Field ops = map.field(OPERATIONS_KEY);
    if (ops != null) {
      operationReader.readOperations(ops);
    }
  }
}
