package dev.sluice.config.envoy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A request's descriptors resolved against a domain, as Envoy's service resolves them: per
 * descriptor, in request order, what it matched, or null where it matched no limit or its limit
 * is {@code replaces}d by another matched one; and whether an enforced {@code requests_per_unit: 0}
 * limit blocks the whole request.
 */
public record EnvoyResolution(List<EnvoyMatch> matches, boolean blocked) {

  public EnvoyResolution {
    // Nulls stand for descriptors without a limit; List.copyOf would refuse them.
    matches = Collections.unmodifiableList(new ArrayList<>(matches));
  }
}
