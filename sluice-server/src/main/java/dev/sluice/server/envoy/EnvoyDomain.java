package dev.sluice.server.envoy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import dev.sluice.config.ConfigException;
import java.util.ArrayList;
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
  private final List<ConfigProblem> warnings;

  EnvoyDomain(String domain, ConfigLocation at, EnvoyDescriptors root, List<Rule> rules,
      Map<String, ConfigLocation> origins, List<ConfigProblem> warnings) {
    this.domain = domain;
    this.at = at;
    this.root = root;
    this.rules = List.copyOf(rules);
    this.origins = new LinkedHashMap<>(origins);
    this.warnings = List.copyOf(warnings);
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
   * native and Envoy files are merged. Its warnings name the fields read that change nothing.
   */
  public LoadedConfig asLoadedConfig() {
    return new LoadedConfig(RuleSet.of(rules), warnings, origins);
  }

  /**
   * This domain with the descriptors of {@code other}, a file of the same domain, as Envoy's
   * service merges them with {@code MERGE_DOMAIN_CONFIG}: their top-level descriptors side by
   * side.
   *
   * @throws ConfigException if both files have a top-level descriptor of the same key and value
   */
  public EnvoyDomain merge(EnvoyDomain other) throws ConfigException {
    EnvoyDescriptors merged = new EnvoyDescriptors();
    merged.addAll(root);
    EnvoyDescriptors.Node dup = merged.addAll(other.root);
    if (dup != null) {
      throw new ConfigException(ConfigProblem.at(dup.at, "duplicate descriptor composite key '" + domain + "/"
          + dup.key + (dup.value == null ? "" : ":" + dup.value) + "' (also in " + file() + ")"));
    }
    List<Rule> all = new ArrayList<>(rules);
    all.addAll(other.rules);
    Map<String, ConfigLocation> o = new LinkedHashMap<>(origins);
    o.putAll(other.origins);
    List<ConfigProblem> w = new ArrayList<>(warnings);
    w.addAll(other.warnings);
    return new EnvoyDomain(domain, at, merged, all, o, w);
  }

  /** The limit a request descriptor matches, or null if none applies. */
  EnvoyDescriptors.Match match(RateLimitDescriptor descriptor) {
    return root.match(descriptor.getEntriesList());
  }
}
