package dev.sluice.server.config;

import dev.sluice.RuleSet;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.envoy.EnvoyDomain;
import dev.sluice.server.rlqs.RlqsConfig;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a configuration says: the rules of all files (native and Envoy alike), the lint
 * warnings about them, where each rule is defined, the Envoy domains, the files themselves, and
 * how Envoy's Rate Limit Quota Service buckets map to rules ({@code rlqs:} sections).
 */
public record ServiceConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins,
    Map<String, EnvoyDomain> domains, List<SourceFile> sources, RlqsConfig rlqs) {

  public ServiceConfig {
    warnings = List.copyOf(warnings);
    origins = Collections.unmodifiableMap(new LinkedHashMap<>(origins));
    domains = Collections.unmodifiableMap(new LinkedHashMap<>(domains));
    sources = List.copyOf(sources);
    java.util.Objects.requireNonNull(rlqs, "rlqs");
  }

  /** A configuration without {@code rlqs:} sections. */
  public ServiceConfig(RuleSet rules, List<ConfigProblem> warnings, Map<String, ConfigLocation> origins,
      Map<String, EnvoyDomain> domains, List<SourceFile> sources) {
    this(rules, warnings, origins, domains, sources, RlqsConfig.NONE);
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
