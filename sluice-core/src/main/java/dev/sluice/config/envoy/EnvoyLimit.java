package dev.sluice.config.envoy;

import dev.sluice.Rule;
import java.util.List;
import java.util.Map;

/**
 * What one descriptor of an Envoy file limits.
 *
 * @param path the descriptor's place in its file, for messages ({@code messaging/message_type:marketing})
 * @param rule the Sluice rule that counts it; null when {@code unlimited} or {@code blocked}
 * @param name the rate limit's {@code name} (for {@code replaces}), or null
 * @param replaces names of other rate limits this one replaces when both match a request
 * @param unlimited {@code unlimited: true}: always OK, never counted
 * @param blocked {@code requests_per_unit: 0}: always over the limit, as in Envoy's own service
 * @param shadow {@code shadow_mode: true}: counted and reported, never enforced
 * @param quota {@code quota_mode: true}: over its limit, it denies a request only if every
 *     quota-mode limit of the request is over its own (and its rule is a shadow rule)
 * @param metadata {@code metadata} as plain values (maps, lists, strings, doubles, booleans,
 *     nulls), for the answer's dynamic metadata; null without one
 * @param unit for a blocked limit, its configured unit (reported back to Envoy)
 */
public record EnvoyLimit(String path, Rule rule, String name, List<String> replaces, boolean unlimited,
    boolean blocked, boolean shadow, boolean quota, Map<String, Object> metadata, EnvoyUnit unit) {

  public EnvoyLimit {
    replaces = List.copyOf(replaces);
  }

  /**
   * The name of the rule that counts this limit, or would count it for a limit without one
   * ({@code envoy:<domain>/<key>[:<value>]/...}): what answers name it by.
   */
  public String ruleName() {
    return rule != null ? rule.name() : EnvoyRuleNames.of(path);
  }
}
