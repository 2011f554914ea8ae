package dev.sluice.config;

import dev.sluice.RuleSet;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A configuration that loaded: its rules, the lint warnings about them, and where each rule was
 * defined (the location of its name).
 */
public record LoadedConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins) {

  public LoadedConfig {
    Objects.requireNonNull(rules, "rules");
    warnings = List.copyOf(warnings);
    origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
  }

  /** Where the rule named {@code rule} was defined, or null. */
  public ConfigLocation origin(String rule) {
    return origins.get(rule);
  }
}
