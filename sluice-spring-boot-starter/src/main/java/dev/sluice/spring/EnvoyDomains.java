package dev.sluice.spring;

import dev.sluice.config.envoy.EnvoyDomain;
import java.util.Map;

/**
 * The Envoy domains in force: those of the Envoy files in {@code sluice.config}, by name. A reload
 * replaces them together with the rules, after the rules, so that a request never resolves to a
 * rule not yet in force.
 */
public final class EnvoyDomains {
  private volatile Map<String, EnvoyDomain> current;

  EnvoyDomains(Map<String, EnvoyDomain> domains) {
    this.current = Map.copyOf(domains);
  }

  /** The domains in force, by name. */
  public Map<String, EnvoyDomain> current() {
    return current;
  }

  void replace(Map<String, EnvoyDomain> domains) {
    this.current = Map.copyOf(domains);
  }
}
