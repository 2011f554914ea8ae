package dev.sluice.spring.web;

import dev.sluice.spring.SluiceConfigurationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.springframework.http.HttpMethod;

/**
 * Whether each route could match a request that a handler serves. A route "matches nothing" when
 * no annotated handler ({@code @RequestMapping} and its variants) overlaps it: for none of the
 * handler's patterns does the route's pattern match the handler's read as a path
 * ({@code /api/**} and {@code /api/orders/{id}}), or the handler's match the route's
 * ({@code /users/{id}} and {@code /users/42}), with a method in common (a route or handler
 * without methods has them all). Routes served by something else (functional endpoints, static
 * resources, another servlet) are not seen: {@code sluice.web.check-routes=false} skips the check.
 */
final class RouteCheck {
  /** One handler's patterns and methods (empty: every method). */
  record Handler(Set<String> patterns, Set<HttpMethod> methods) {}

  private RouteCheck() {}

  /**
   * @throws SluiceConfigurationException naming every route that no handler overlaps
   */
  static void check(RouteTable table, List<Handler> handlers) {
    List<String> unmatched = new ArrayList<>();
    for (RouteTable.Route r : table.routes()) {
      boolean any = handlers.stream().anyMatch(h -> h.patterns().stream()
          .anyMatch(p -> RouteTable.overlaps(r, p, h.methods())));
      if (!any) {
        unmatched.add(r.where() + " (" + (r.methods().isEmpty() ? "" : String.join(",", r.methods()) + " ")
            + r.pattern().getPatternString() + ") matches no handler of the application");
      }
    }
    if (!unmatched.isEmpty()) {
      throw new SluiceConfigurationException(String.join("\n", unmatched), "Correct the route's path or methods "
          + "to those of a @RequestMapping, or set sluice.web.check-routes=false if the paths are served by "
          + "functional endpoints, static resources or another servlet.");
    }
  }
}
