package dev.sluice.server.config;

import dev.sluice.RuleSet;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.server.envoy.EnvoyDomain;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a configuration says: the rules of all files (native and Envoy alike), the lint
 * warnings about them, where each rule is defined, the Envoy domains, and the files themselves.
 */
public record ServiceConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins,
    Map<String, EnvoyDomain> domains, List<SourceFile> sources) {

  public ServiceConfig {
    warnings = List.copyOf(warnings);
    origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
    domains = Collections.unmodifiableMap(new LinkedHashMap<>(domains));
    sources = List.copyOf(sources);
  }

  /** Where rule {@code name} is defined, or null. */
  public ConfigLocation origin(String name) {
    return origins.get(name);
  }

  /** The file that defines rule {@code name}, or null. */
  public SourceFile sourceOf(String name) {
    for (SourceFile s : sources) {
      if (s.rules().contains(name)) {
        return s;
      }
    }
    return null;
  }
}
