package dev.sluice.server.rlqs;

import dev.sluice.config.ConfigLocation;
import java.util.List;
import java.util.Map;

/**
 * How the buckets of one Envoy {@code domain} map to rules: the first entry whose {@code when}
 * pairs all appear in a bucket and whose key template finds every value it names; a bucket no
 * entry maps gets the {@code unmatched} blanket rule.
 *
 * @param at where the domain is named
 * @param denyUnmatched whether an unmapped bucket is denied everything ({@code unmatched: deny})
 *     rather than allowed everything (the default)
 */
public record RlqsDomain(String domain, ConfigLocation at, List<BucketMapping> buckets, boolean denyUnmatched) {
  public RlqsDomain {
    buckets = List.copyOf(buckets);
  }

  /** Where a bucket is counted: a rule and a key. */
  record Target(String rule, String key) {}

  /** The rule and key of a bucket, or null when no entry maps it. */
  Target resolve(Map<String, String> bucket) {
    for (BucketMapping m : buckets) {
      if (m.matches(bucket)) {
        String key = m.key().expand(bucket);
        if (key != null) {
          return new Target(m.rule(), key);
        }
      }
    }
    return null;
  }
}
