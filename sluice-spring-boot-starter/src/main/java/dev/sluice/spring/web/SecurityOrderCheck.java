package dev.sluice.spring.web;

import dev.sluice.spring.SluiceConfigurationException;
import java.util.List;

/**
 * A filter ordered before Spring Security's sees every request as anonymous: the routes that read
 * {@code principal} would skip their per-user items ({@code when: user}) or refuse every request.
 * Such a configuration stops the start instead of limiting nobody.
 */
final class SecurityOrderCheck {
  private SecurityOrderCheck() {}

  /**
   * Called when Sluice's filter (order {@code order}) runs before {@code security}.
   *
   * @throws SluiceConfigurationException if a route reads the principal
   */
  static void sluiceRunsFirst(RouteTable table, int order, String security) {
    List<String> reading = table.routes().stream()
        .filter(r -> r.attributes().values().stream().anyMatch(a -> a.kind() == AttributeSource.Kind.PRINCIPAL))
        .map(RouteTable.Route::where).toList();
    if (reading.isEmpty()) {
      return;
    }
    throw new SluiceConfigurationException(String.join(", ", reading) + " read" + (reading.size() == 1 ? "s" : "")
        + " the principal, but sluice.web.filter-order (" + order + ") runs Sluice's filter before " + security
        + ", so no request would have one yet",
        "Give sluice.web.filter-order a value above Spring Security's filter order (-100 unless changed); the "
            + "default, 0, is.");
  }
}
