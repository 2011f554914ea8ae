package dev.sluice.spring.web;

import dev.sluice.OperationRequest;
import dev.sluice.spring.SluiceConfigurationException;
import dev.sluice.spring.SluiceProperties;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PatternParseException;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * {@code sluice.web.routes}, checked and compiled: the first route whose pattern and method
 * match a request gives its operation and attributes.
 */
public final class RouteTable {
  private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
      "TRACE");

  /** One compiled route; {@code where} names it in messages ({@code sluice.web.routes[0]}). */
  record Route(String where, PathPattern pattern, Set<String> methods, String operation,
      Map<String, AttributeSource> attributes, long cost) {}

  private final List<Route> routes;
  private final ClientIp clientIp;

  private RouteTable(List<Route> routes, ClientIp clientIp) {
    this.routes = List.copyOf(routes);
    this.clientIp = clientIp;
  }

  /**
   * Checks and compiles the routes of {@code web}.
   *
   * @throws SluiceConfigurationException naming the route and property at fault
   */
  public static RouteTable of(SluiceProperties.Web web) {
    PathPatternParser parser = PathPatternParser.defaultInstance;
    List<Route> routes = new ArrayList<>();
    List<SluiceProperties.Route> given = web.getRoutes();
    for (int i = 0; i < given.size(); i++) {
      SluiceProperties.Route r = given.get(i);
      String where = "sluice.web.routes[" + i + "]";
      if (r.getPath() == null || r.getPath().isBlank()) {
        throw new SluiceConfigurationException(where + ".path is missing", "Give each route a path pattern, "
            + "e.g. /api/orders/**.");
      }
      PathPattern pattern;
      try {
        pattern = parser.parse(r.getPath());
      } catch (PatternParseException e) {
        throw new SluiceConfigurationException(where + ".path '" + r.getPath() + "' is not a path pattern: "
            + e.getMessage(), "Write the pattern as Spring MVC and WebFlux do: /api/**, /users/{id}.");
      }
      if (r.getOperation() == null || r.getOperation().isBlank()) {
        throw new SluiceConfigurationException(where + ".operation is missing",
            "Name the operation that requests matching " + r.getPath() + " run.");
      }
      Set<String> methods = new LinkedHashSet<>();
      for (String m : r.getMethods()) {
        String up = m.trim().toUpperCase(Locale.ROOT);
        if (!METHODS.contains(up)) {
          throw new SluiceConfigurationException(where + ".methods has '" + m + "', which is not an HTTP method",
              "Use " + String.join(", ", new java.util.TreeSet<>(METHODS)) + ".");
        }
        methods.add(up);
      }
      if (r.getCost() < 0) {
        throw new SluiceConfigurationException(where + ".cost is " + r.getCost(), "Give a cost of 0 or more.");
      }
      Map<String, AttributeSource> attributes = new LinkedHashMap<>();
      for (Map.Entry<String, String> a : r.getAttributes().entrySet()) {
        AttributeSource s = AttributeSource.parse(a.getValue(), where + ".attributes." + a.getKey());
        if (s.kind() == AttributeSource.Kind.PATH_VARIABLE && !variables(pattern).contains(s.argument())) {
          throw new SluiceConfigurationException(where + ".attributes." + a.getKey() + " reads path variable '"
              + s.argument() + "', which " + r.getPath() + " does not have",
              "Name a variable of the route's pattern, e.g. /users/{id} has 'id'.");
        }
        attributes.put(a.getKey(), s);
      }
      routes.add(new Route(where, pattern, Set.copyOf(methods), r.getOperation().trim(), attributes, r.getCost()));
    }
    return new RouteTable(routes, ClientIp.of(web.getTrustedProxies()));
  }

  private static Set<String> variables(PathPattern p) {
    Set<String> names = new LinkedHashSet<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{\\*?([^}:]+)").matcher(p.getPatternString());
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** Each route's operation and the attributes it maps, by where the route is written. */
  public Map<String, Map.Entry<String, Set<String>>> uses() {
    Map<String, Map.Entry<String, Set<String>>> uses = new LinkedHashMap<>();
    for (Route r : routes) {
      uses.put(r.where(), Map.entry(r.operation(), r.attributes().keySet()));
    }
    return uses;
  }

  List<Route> routes() {
    return routes;
  }

  public boolean isEmpty() {
    return routes.isEmpty();
  }

  /** The operation request of {@code request}, or null when no route matches it. */
  OperationRequest match(RequestView request) {
    String method = request.method();
    PathContainer path = null;
    for (Route r : routes) {
      if (!r.methods().isEmpty() && !r.methods().contains(method)) {
        continue;
      }
      if (path == null) {
        path = PathContainer.parsePath(request.path());
      }
      PathPattern.PathMatchInfo info = r.pattern().matchAndExtract(path);
      if (info == null) {
        continue;
      }
      OperationRequest.Builder b = OperationRequest.builder(r.operation()).cost(r.cost());
      for (Map.Entry<String, AttributeSource> a : r.attributes().entrySet()) {
        String v = a.getValue().value(request, clientIp, info.getUriVariables());
        if (v != null) {
          b.attribute(a.getKey(), v);
        }
      }
      return b.build();
    }
    return null;
  }

  /** Whether route {@code r} could serve a handler mapped to {@code pattern} and {@code methods}. */
  static boolean overlaps(Route r, String pattern, Set<HttpMethod> methods) {
    if (!r.methods().isEmpty() && !methods.isEmpty()
        && methods.stream().noneMatch(m -> r.methods().contains(m.name()))) {
      return false;
    }
    if (r.pattern().matches(PathContainer.parsePath(pattern))) {
      return true;
    }
    try {
      return PathPatternParser.defaultInstance.parse(pattern).matches(PathContainer.parsePath(r.pattern()
          .getPatternString()));
    } catch (PatternParseException e) {
      return false;
    }
  }
}
