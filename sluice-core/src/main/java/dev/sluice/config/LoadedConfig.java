package dev.sluice.config;

import dev.sluice.Attribute;
import dev.sluice.Operation;
import dev.sluice.RuleSet;
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
 * ({@link ConfigLoader#merge}), which checks them against every rule.
 *
 * @param origins where each rule was defined (the location of its name)
 * @param operationOrigins per operation, the location of its name, then of each item's rule
 * @param attributeOrigins where each typed attribute was declared
 */
public record LoadedConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins,
    List<Operation> operations, List<Attribute> attributes, Map<String, List<ConfigLocation>> operationOrigins,
    Map<String, ConfigLocation> attributeOrigins) {

  public LoadedConfig {
    Objects.requireNonNull(rules, "rules");
    warnings = List.copyOf(warnings);
    origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
    operations = List.copyOf(operations);
    attributes = List.copyOf(attributes);
    operationOrigins = Collections.unmodifiableMap(new LinkedHashMap<>(operationOrigins));
    attributeOrigins = Collections.unmodifiableMap(new LinkedHashMap<>(attributeOrigins));
  }

  /** A configuration of rules alone. */
  public LoadedConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins) {
    this(rules, warnings, origins, List.copyOf(rules.operations()), List.copyOf(rules.attributes()), Map.of(),
        Map.of());
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
