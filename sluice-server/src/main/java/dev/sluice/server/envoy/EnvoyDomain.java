package dev.sluice.server.envoy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.LoadedConfig;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rate limits of one Envoy domain, read from one file: the descriptor tree Envoy requests are
 * matched against, and the Sluice rules its limits became.
 */
public final class EnvoyDomain {
  private final String domain;
  private final ConfigLocation at;
  private final EnvoyDescriptors root;
  private final List<Rule> rules;
  private final Map<String, ConfigLocation> origins;

  EnvoyDomain(String domain, ConfigLocation at, EnvoyDescriptors root, List<Rule> rules,
      Map<String, ConfigLocation> origins) {
    this.domain = domain;
    this.at = at;
    this.root = root;
    this.rules = List.copyOf(rules);
    this.origins = new LinkedHashMap<>(origins);
  }

  public String domain() {
    return domain;
  }

  /** Where the domain is named: the file it was read from, with line and column. */
  public ConfigLocation location() {
    return at;
  }

  /** The file the domain was read from. */
  public String file() {
    return at.file();
  }

  /** The Sluice rules of this domain's limits (one per limited descriptor), in file order. */
  public List<Rule> rules() {
    return rules;
  }

  /**
   * The rules as a configuration, each defined where its descriptor is written: the form in which
   * native and Envoy files are merged. Envoy files have no lint warnings.
   */
  public LoadedConfig asLoadedConfig() {
    return new LoadedConfig(RuleSet.of(rules), List.of(), origins);
  }

  /** The limit a request descriptor matches, or null if none applies. */
  EnvoyDescriptors.Match match(RateLimitDescriptor descriptor) {
    return root.match(descriptor.getEntriesList());
  }
}
