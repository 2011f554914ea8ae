package dev.sluice.config.envoy;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.LoadedConfig;
import dev.sluice.config.ConfigException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rate limits of one Envoy domain, read from one file: the descriptor tree Envoy requests are
 * matched against, and the Sluice rules its limits became. The service answers Envoy's gRPC calls
 * through it, and the Spring Boot starter decides its routes' descriptors through it.
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

  /**
   * What a request descriptor matches, following Envoy's lookup (an exact value first, then the
   * first matching wildcard in file order, then the key alone; a limit applies only to a
   * descriptor that ends at its depth), with the key of its counter; null if no limit applies.
   */
  public EnvoyMatch match(List<EnvoyEntry> descriptor) {
    EnvoyDescriptors.Match m = root.match(descriptor);
    return m == null ? null : new EnvoyMatch(m.limit(), EnvoyEntry.key(descriptor, m.sharedValues()));
  }

  /**
   * The descriptors of one request resolved as Envoy's service resolves them: each matched, then
   * a matched limit whose {@code name} another matched limit {@code replaces} dropped.
   */
  public EnvoyResolution resolve(List<List<EnvoyEntry>> descriptors) {
    EnvoyMatch[] matches = new EnvoyMatch[descriptors.size()];
    Set<String> replaced = new HashSet<>();
    for (int i = 0; i < matches.length; i++) {
      matches[i] = match(descriptors.get(i));
      if (matches[i] != null) {
        replaced.addAll(matches[i].limit().replaces());
      }
    }
    boolean blocked = false;
    for (int i = 0; i < matches.length; i++) {
      EnvoyLimit l = matches[i] == null ? null : matches[i].limit();
      if (l != null && l.name() != null && replaced.contains(l.name())) {
        matches[i] = null;
      } else if (l != null && l.blocked() && !l.shadow() && !l.quota()) {
        blocked = true;
      }
    }
    return new EnvoyResolution(Arrays.asList(matches), blocked);
  }

  /**
   * Whether a request descriptor with these entry keys could match a limit of this domain.
   *
   * @param values per entry, its value when it is the same for every request, or null when each
   *     request brings its own (any value of the key may then match)
   */
  public boolean mayMatch(List<String> keys, List<String> values) {
    if (keys.size() != values.size()) {
      throw new IllegalArgumentException("keys and values differ in number: " + keys.size() + ", " + values.size());
    }
    return !keys.isEmpty() && root.mayMatch(keys, values);
  }

  /**
   * The descriptors with a limit, as {@code key[:value]} paths below the domain
   * ({@code remote_address}, {@code generic_key:api/user}), sorted: for messages that list them.
   */
  public List<String> limitedDescriptors() {
    List<String> paths = new ArrayList<>();
    root.limitedPaths(paths);
    return paths.stream().map(p -> p.substring(domain.length() + 1)).sorted().toList();
  }
}
