package dev.sluice.server.envoy;

import dev.sluice.Rule;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import java.util.List;
import java.util.Map;

/**
 * The rate limits of one Envoy domain, read from one file: the descriptor tree Envoy requests are
 * matched against, and the Sluice rules its limits became.
 */
public final class EnvoyDomain {
  private final String domain;
  private final String file;
  private final EnvoyDescriptors root;
  private final List<Rule> rules;
  private final Map<String, int[]> origins;

  EnvoyDomain(String domain, String file, EnvoyDescriptors root, List<Rule> rules, Map<String, int[]> origins) {
    this.domain = domain;
    this.file = file;
    this.root = root;
    this.rules = List.copyOf(rules);
    this.origins = Map.copyOf(origins);
  }

  /** The line and column of the descriptor that defines rule {@code name}, or null. */
  public int[] origin(String name) {
    int[] o = origins.get(name);
    return o == null ? null : o.clone();
  }

  public String domain() {
    return domain;
  }

  /** The file the domain was read from. */
  public String file() {
    return file;
  }

  /** The Sluice rules of this domain's limits (one per limited descriptor), in file order. */
  public List<Rule> rules() {
    return rules;
  }

  /** The limit a request descriptor matches, or null if none applies. */
  EnvoyLimit match(RateLimitDescriptor descriptor) {
    return root.match(descriptor.getEntriesList());
  }
}
