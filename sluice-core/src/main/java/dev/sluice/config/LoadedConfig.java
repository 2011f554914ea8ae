package dev.sluice.config;

import dev.sluice.Attribute;
import dev.sluice.policy.ListKind;
import dev.sluice.Operation;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A configuration that loaded: its rules (with the operations over them), the lint warnings
 * about them, and where each rule, operation and attribute was defined.
 *
 * <p>One file of several ({@link ConfigLoader#parsePart}) lists its operations and attributes in
 * {@link #operations()} and {@link #attributes()} but not yet in {@link #rules()}: an operation
 * may name a rule of another file, so they join the rule set when the files are merged
 * ({@link ConfigLoader#merge}), which checks them against every rule. So it is with its tiers
 * ({@link #tiers()}) and its rules' access lists ({@link #allow()}, {@link #deny()}): the merge
 * puts them in the rule set.
 *
 * @param origins where each rule was defined (the location of its name)
 * @param operationOrigins per operation, the location of its name, then of each item's rule
 * @param attributeOrigins where each typed attribute was declared
 * @param tiers the named tiers, in order
 * @param tierOrigins where each tier was defined (the location of its name)
 * @param allow the configured allow list of each rule that has one
 * @param deny the configured deny list of each rule that has one
 * @param auditOrigins where each auditing rule names its attribute ({@code audit.attribute})
 */
public record LoadedConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins,
    List<Operation> operations, List<Attribute> attributes, Map<String, List<ConfigLocation>> operationOrigins,
    Map<String, ConfigLocation> attributeOrigins, Map<String, List<Window>> tiers,
    Map<String, ConfigLocation> tierOrigins, Map<String, List<String>> allow, Map<String, List<String>> deny,
    Map<String, ConfigLocation> auditOrigins) {

  public LoadedConfig {
    Objects.requireNonNull(rules, "rules");
    warnings = List.copyOf(warnings);
    origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
    operations = List.copyOf(operations);
    attributes = List.copyOf(attributes);
    operationOrigins = Collections.unmodifiableMap(new LinkedHashMap<>(operationOrigins));
    attributeOrigins = Collections.unmodifiableMap(new LinkedHashMap<>(attributeOrigins));
    tiers = Collections.unmodifiableMap(new LinkedHashMap<>(tiers));
    tierOrigins = Collections.unmodifiableMap(new LinkedHashMap<>(tierOrigins));
    allow = Collections.unmodifiableMap(new LinkedHashMap<>(allow));
    deny = Collections.unmodifiableMap(new LinkedHashMap<>(deny));
    auditOrigins = Collections.unmodifiableMap(new LinkedHashMap<>(auditOrigins));
  }

  /** A configuration of rules and operations, without tiers or access lists of its own. */
  public LoadedConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins,
      List<Operation> operations, List<Attribute> attributes, Map<String, List<ConfigLocation>> operationOrigins,
      Map<String, ConfigLocation> attributeOrigins) {
    this(rules, warnings, origins, operations, attributes, operationOrigins, attributeOrigins, rules.tiers(),
        Map.of(), rules.lists(ListKind.ALLOW), rules.lists(ListKind.DENY), Map.of());
  }

  /** A configuration of rules alone. */
  public LoadedConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins) {
    this(rules, warnings, origins, List.copyOf(rules.operations()), List.copyOf(rules.attributes()), Map.of(),
        Map.of());
  }

  /** The configured {@code kind} list of each rule that has one. */
  public Map<String, List<String>> list(ListKind kind) {
    return kind == ListKind.ALLOW ? allow : deny;
  }

  /** Where the tier named {@code tier} was defined, or null. */
  public ConfigLocation tierOrigin(String tier) {
    return tierOrigins.get(tier);
  }

  /** Where the rule named {@code rule} was defined, or null. */
  public ConfigLocation origin(String rule) {
    return origins.get(rule);
  }

  /** Where the operation named {@code operation} was defined (its name), or null. */
  public ConfigLocation operationOrigin(String operation) {
    List<ConfigLocation> at = operationOrigins.get(operation);
    return at == null ? null : at.get(0);
  }
}
