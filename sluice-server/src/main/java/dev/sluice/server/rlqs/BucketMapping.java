package dev.sluice.server.rlqs;

import dev.sluice.config.ConfigLocation;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One entry of a domain's {@code buckets}: a bucket whose {@code BucketId} holds every
 * {@code when} pair is counted in {@code rule} under the key {@code key} makes of its values.
 *
 * @param ruleAt where the entry names its rule, for the errors of the rule check
 */
record BucketMapping(Map<String, String> when, String rule, KeyTemplate key, ConfigLocation ruleAt) {
  BucketMapping {
    when = Collections.unmodifiableMap(new LinkedHashMap<>(when));
  }

  /** Whether a bucket's values hold every {@code when} pair. */
  boolean matches(Map<String, String> bucket) {
    for (Map.Entry<String, String> e : when.entrySet()) {
      if (!e.getValue().equals(bucket.get(e.getKey()))) {
        return false;
      }
    }
    return true;
  }
}
