package dev.sluice.server.envoy;

import dev.sluice.Rule;
import java.util.List;

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
 * @param unit for a blocked limit, its configured unit (reported back to Envoy)
 */
record EnvoyLimit(String path, Rule rule, String name, List<String> replaces, boolean unlimited, boolean blocked,
    boolean shadow, EnvoyUnit unit) {

  EnvoyLimit {
    replaces = List.copyOf(replaces);
  }
}
