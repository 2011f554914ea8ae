package dev.sluice.server.config;

import dev.sluice.RuleSet;
import dev.sluice.server.envoy.EnvoyDomain;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything the service's configuration says: the rules of all files (native and Envoy alike),
 * the Envoy domains, and which file each rule came from.
 */
public record ServiceConfig(RuleSet rules, Map<String, EnvoyDomain> domains, List<SourceFile> sources) {

  public ServiceConfig {
    domains = Collections.unmodifiableMap(new LinkedHashMap<>(domains));
    sources = List.copyOf(sources);
  }

  public static ServiceConfig empty() {
    return new ServiceConfig(RuleSet.empty(), Map.of(), List.of());
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
