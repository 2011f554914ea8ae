package dev.sluice.server.rlqs;

import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code rlqs:} sections of a configuration: per Envoy domain, how its Rate Limit Quota
 * Service buckets map to leased rules (docs/scaling.md, §5).
 */
public record RlqsConfig(Map<String, RlqsDomain> domains) {
  /** No {@code rlqs:} section: every stream's domain is unknown. */
  public static final RlqsConfig NONE = new RlqsConfig(Map.of());

  public RlqsConfig {
    domains = Collections.unmodifiableMap(new LinkedHashMap<>(domains));
  }

  /** The domain named {@code name}, or null. */
  public RlqsDomain domain(String name) {
    return domains.get(name);
  }

  /**
   * The domains of every file as one configuration, each mapping checked against the rules of
   * all files: a rule that does not exist, or is not {@code mode: leased} (Envoy's assignments are
   * covered by units taken from the store, which only a leased rule may hand out), is an error at
   * the entry's {@code rule}; so is a domain named in two places.
   *
   * @param problems where errors are added
   */
  public static RlqsConfig merge(List<RlqsDomain> parts, RuleSet rules, List<ConfigProblem> problems) {
    Map<String, RlqsDomain> domains = new LinkedHashMap<>();
    for (RlqsDomain d : parts) {
      RlqsDomain before = domains.putIfAbsent(d.domain(), d);
      if (before != null) {
        problems.add(ConfigProblem.at(d.at(), "duplicate rlqs domain '" + d.domain() + "' (first at " + before.at()
            + ")"));
        continue;
      }
      for (BucketMapping m : d.buckets()) {
        Rule r = rules.get(m.rule());
        ConfigLocation at = m.ruleAt();
        if (r == null) {
          problems.add(ConfigProblem.at(at, "rlqs domain '" + d.domain() + "' maps buckets to rule '" + m.rule()
              + "', which no file defines"));
        } else if (r.lease() == null) {
          problems.add(ConfigProblem.at(at, "rlqs domain '" + d.domain() + "' maps buckets to rule '" + m.rule()
              + "', which is not 'mode: leased': Envoy's assignments are covered by units taken from the store, "
              + "which only a leased rule hands out"));
        }
      }
    }
    return new RlqsConfig(domains);
  }
}
