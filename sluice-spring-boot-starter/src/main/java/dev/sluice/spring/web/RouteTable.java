package dev.sluice.spring.web;

import dev.sluice.OperationRequest;
import dev.sluice.config.envoy.EnvoyDomain;
import dev.sluice.spring.Requirements;
import dev.sluice.spring.SluiceConfigurationException;
import dev.sluice.spring.SluiceProperties;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PatternParseException;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * {@code sluice.web.routes}, checked and compiled: the first route whose pattern and method
 * match a request decides it, by its operation and attributes or by its Envoy domain and
 * descriptors ({@link EnvoyRoute}).
 */
public final class RouteTable {
  private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
      "TRACE");

  /**
   * One compiled route; {@code where} names it in messages ({@code sluice.web.routes[0]}). It has
   * an operation with its attributes, or an Envoy route (and no operation).
   */
  record Route(String where, PathPattern pattern, Set<String> methods, String operation,
      Map<String, AttributeSource> attributes, long cost, EnvoyRoute envoy) {}

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
    return of(web, Map::of);
  }

  /**
   * Checks and compiles the routes of {@code web}; a route with an Envoy {@code domain} resolves
   * its descriptors in the domains {@code domains} gives at each request (they change on reload).
   *
   * @throws SluiceConfigurationException naming the route and property at fault
   */
  public static RouteTable of(SluiceProperties.Web web, Supplier<Map<String, EnvoyDomain>> domains) {
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
      // "descriptors:" written with nothing under it binds as null.
      List<Map<String, String>> descriptors = r.getDescriptors() == null ? List.of() : r.getDescriptors();
      boolean hasOperation = r.getOperation() != null && !r.getOperation().isBlank();
      boolean hasDomain = r.getDomain() != null && !r.getDomain().isBlank();
      if (hasOperation && (hasDomain || !descriptors.isEmpty())) {
        throw new SluiceConfigurationException(where + " gives both an operation ('" + r.getOperation()
            + "') and an Envoy " + (hasDomain ? "domain ('" + r.getDomain() + "')" : "route's descriptors"),
            "Give a route either operation (with attributes) or domain and descriptors, not both.");
      }
      if (!hasOperation && !hasDomain) {
        throw new SluiceConfigurationException(where + (descriptors.isEmpty() ? ".operation is missing"
            : " has descriptors but no domain"), "Name the operation that requests matching " + r.getPath()
            + " run, or the Envoy domain (of a file in sluice.config) and the descriptors they send to it.");
      }
      if (hasDomain && !r.getAttributes().isEmpty()) {
        throw new SluiceConfigurationException(where + ".attributes are given, but the route decides through "
            + "Envoy domain '" + r.getDomain() + "', which reads none", "Write each value's source in the "
            + "descriptors' entries instead, e.g. {user: header:X-User}.");
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
        checkVariable(s, pattern, r.getPath(), where + ".attributes." + a.getKey());
        attributes.put(a.getKey(), s);
      }
      EnvoyRoute envoy = null;
      if (hasDomain) {
        envoy = EnvoyRoute.of(where, r.getDomain(), descriptors, domains, r.getCost());
        for (EnvoyRoute.Descriptor d : envoy.descriptors()) {
          for (int k = 0; k < d.sources().size(); k++) {
            checkVariable(d.sources().get(k), pattern, r.getPath(), where + ".descriptors." + d.keys().get(k));
          }
        }
      }
      routes.add(new Route(where, pattern, Set.copyOf(methods), hasOperation ? r.getOperation().trim() : null,
          attributes, r.getCost(), envoy));
    }
    return new RouteTable(routes, ClientIp.of(web.getTrustedProxies()));
  }

  private static void checkVariable(AttributeSource s, PathPattern pattern, String path, String where) {
    if (s.kind() == AttributeSource.Kind.PATH_VARIABLE && !variables(pattern).contains(s.argument())) {
      throw new SluiceConfigurationException(where + " reads path variable '" + s.argument() + "', which "
          + path + " does not have", "Name a variable of the route's pattern, e.g. /users/{id} has 'id'.");
    }
  }

  private static Set<String> variables(PathPattern p) {
    Set<String> names = new LinkedHashSet<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{\\*?([^}:]+)").matcher(p.getPatternString());
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** Each operation route's operation and the attributes it maps, by where the route is written. */
  public Map<String, Map.Entry<String, Set<String>>> uses() {
    Map<String, Map.Entry<String, Set<String>>> uses = new LinkedHashMap<>();
    for (Route r : routes) {
      if (r.envoy() == null) {
        uses.put(r.where(), Map.entry(r.operation(), r.attributes().keySet()));
      }
    }
    return uses;
  }

  /** What each Envoy route needs of the domains: its domain, and a limit each descriptor can meet. */
  public List<Requirements.Use> envoyUses() {
    List<Requirements.Use> uses = new ArrayList<>();
    for (Route r : routes) {
      if (r.envoy() != null) {
        uses.add(Requirements.envoy(r.where(), r.envoy().domain(), r.envoy().keys(), r.envoy().constants()));
      }
    }
    return uses;
  }

  List<Route> routes() {
    return routes;
  }

  public boolean isEmpty() {
    return routes.isEmpty();
  }

  /** What decides {@code request}, or null when no route matches it. */
  RouteCall match(RequestView request) {
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
      if (r.envoy() != null) {
        List<List<String>> values = new ArrayList<>();
        for (EnvoyRoute.Descriptor d : r.envoy().descriptors()) {
          List<String> vs = new ArrayList<>(d.sources().size());
          for (AttributeSource s : d.sources()) {
            vs.add(s.value(request, clientIp, info.getUriVariables()));
          }
          values.add(vs);
        }
        return r.envoy().call(values);
      }
      OperationRequest.Builder b = OperationRequest.builder(r.operation()).cost(r.cost());
      for (Map.Entry<String, AttributeSource> a : r.attributes().entrySet()) {
        String v = a.getValue().value(request, clientIp, info.getUriVariables());
        if (v != null) {
          b.attribute(a.getKey(), v);
        }
      }
      return new RouteCall.Operation(b.build());
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
