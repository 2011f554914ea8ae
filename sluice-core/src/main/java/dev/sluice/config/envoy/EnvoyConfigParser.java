package dev.sluice.config.envoy;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.LeasePolicy;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import dev.sluice.config.yaml.YamlTree;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads an Envoy rate limit service configuration file (envoyproxy/ratelimit's YAML) into an
 * {@link EnvoyDomain}. Envoy's rules apply: a descriptor needs a key; a limit needs a valid unit
 * unless it is unlimited; an omitted {@code requests_per_unit} is 0, which blocks everything;
 * repeated descriptors and unknown fields are errors. {@code detailed_metric} and
 * {@code value_to_metric}, which only name Envoy's own statsd metrics, are read with a warning
 * that they change nothing here. The {@code sluice} block is Sluice's
 * extension: several windows and an algorithm for one descriptor, decided as one transaction.
 * Envoy's own service counts in fixed windows aligned to the unit, so that is the default
 * algorithm here.
 */
public final class EnvoyConfigParser {
  private static final Set<String> ROOT_KEYS = Set.of("domain", "descriptors");
  private static final Set<String> DESCRIPTOR_KEYS = Set.of("key", "value", "rate_limit", "descriptors",
      "shadow_mode", "quota_mode", "share_threshold", "metadata", "detailed_metric", "value_to_metric", "sluice");
  private static final Set<String> RATE_LIMIT_KEYS = Set.of("unit", "requests_per_unit", "unlimited", "name", "replaces");
  private static final Set<String> REPLACES_KEYS = Set.of("name");
  private static final Set<String> SLUICE_KEYS = Set.of("algorithm", "windows", "failure_mode", "max_wait", "mode",
      "lease_length", "report_interval", "lease_slack");
  private static final List<String> LEASE_KEYS = List.of("lease_length", "report_interval", "lease_slack");
  private static final Set<String> WINDOW_KEYS = Set.of("limit", "period");
  private static final long UINT32_MAX = 0xFFFF_FFFFL;

  private EnvoyConfigParser() {}

  /**
   * Parses one Envoy file.
   *
   * @param file the name used in error messages
   * @throws ConfigException naming file, line and column of the first problem
   */
  public static EnvoyDomain parse(String file, String yaml) throws ConfigException {
    Node root = YamlTree.read(yaml, file);
    if (root == null) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(file), "the file is empty"));
    }
    MapNode top = fields(root, "an Envoy rate limit file", ROOT_KEYS);
    Node d = get(top, "domain");
    String domain = d == null ? "" : isNull(d) ? "" : text(d, "domain");
    if (domain.isEmpty()) {
      throw error(d == null ? root : d, "config file cannot have an empty domain");
    }
    List<Rule> rules = new ArrayList<>();
    Map<String, ConfigLocation> origins = new LinkedHashMap<>();
    List<ConfigProblem> warnings = new ArrayList<>();
    EnvoyDescriptors tree = new EnvoyDescriptors();
    Node ds = get(top, "descriptors");
    if (ds != null && !isNull(ds)) {
      readLevel(domain, ds, tree, rules, origins, warnings);
    }
    return new EnvoyDomain(domain, d.location(), tree, rules, origins, warnings);
  }

  private static void readLevel(String parentPath, Node list, EnvoyDescriptors level, List<Rule> rules,
      Map<String, ConfigLocation> origins, List<ConfigProblem> warnings) throws ConfigException {
    for (Node dn : list(list, "descriptors")) {
      MapNode m = fields(dn, "a descriptor", DESCRIPTOR_KEYS);
      String key = optText(get(m, "key"), "key");
      if (key == null || key.isEmpty()) {
        throw error(dn, "descriptor has an empty key");
      }
      String value = optText(get(m, "value"), "value");
      if (value != null && value.isEmpty()) {
        value = null;
      }
      String path = parentPath + "/" + key + (value == null ? "" : ":" + value);
      boolean shadow = optBool(get(m, "shadow_mode"), "shadow_mode");
      boolean quota = optBool(get(m, "quota_mode"), "quota_mode");
      boolean share = optBool(get(m, "share_threshold"), "share_threshold");
      if (share && key.indexOf('*') < 0 && (value == null || value.indexOf('*') < 0)) {
        throw error(get(m, "share_threshold"), "share_threshold can only be used with wildcard values "
            + "(containing '*'), but found key '" + key + (value == null ? "" : "_" + value) + "'");
      }
      for (String metric : List.of("detailed_metric", "value_to_metric")) {
        Field f = m.field(metric);
        if (f != null && optBool(f.value(), metric)) {
          warnings.add(ConfigProblem.at(f.at(), metric + " only names envoyproxy/ratelimit's own statsd "
              + "metrics; Sluice's metrics are per rule, so it changes nothing here"));
        }
      }
      Map<String, Object> metadata = metadata(get(m, "metadata"));
      EnvoyLimit limit = readLimit(path, get(m, "rate_limit"), get(m, "sluice"), shadow, quota, metadata);
      for (String onLimit : List.of("quota_mode", "metadata")) {
        Field f = m.field(onLimit);
        boolean set = onLimit.equals("quota_mode") ? quota : metadata != null;
        if (set && (limit == null || limit.unlimited())) {
          warnings.add(ConfigProblem.at(f.at(), onLimit + " applies to a limit, and this descriptor has "
              + (limit == null ? "no rate_limit" : "an unlimited one") + ": it changes nothing here"));
        }
      }
      if (limit != null && limit.rule() != null) {
        rules.add(limit.rule());
        origins.put(limit.rule().name(), dn.location());
      }
      EnvoyDescriptors children = new EnvoyDescriptors();
      Node sub = get(m, "descriptors");
      if (sub != null && !isNull(sub)) {
        readLevel(path, sub, children, rules, origins, warnings);
      }
      if (!level.add(new EnvoyDescriptors.Node(key, value, limit, children, share, dn.location()))) {
        throw error(dn, "duplicate descriptor composite key '" + path + "'");
      }
    }
  }

  private static EnvoyLimit readLimit(String path, Node rl, Node ext, boolean shadow, boolean quota,
      Map<String, Object> metadata) throws ConfigException {
    if (rl == null && ext == null) {
      return null;
    }
    MapNode r = rl == null ? null : fields(rl, "rate_limit", RATE_LIMIT_KEYS);
    String name = optText(get(r, "name"), "rate_limit name");
    if (name != null && name.isEmpty()) {
      name = null;
    }
    List<String> replaces = new ArrayList<>();
    Node rep = get(r, "replaces");
    if (rep != null && !isNull(rep)) {
      for (Node e : list(rep, "replaces")) {
        String n = optText(get(fields(e, "a replaces entry", REPLACES_KEYS), "name"), "replaces name");
        if (n == null || n.isEmpty()) {
          throw error(e, "should not have an empty replaces entry");
        }
        if (n.equals(name)) {
          throw error(e, "replaces should not contain the name of its own rate limit '" + n + "'");
        }
        replaces.add(n);
      }
    }

    MapNode x = ext == null ? null : fields(ext, "sluice", SLUICE_KEYS);
    Node windowsNode = get(x, "windows");
    boolean unlimited = optBool(get(r, "unlimited"), "unlimited");
    Node unitNode = get(r, "unit");
    Node rpuNode = get(r, "requests_per_unit");

    boolean leased = leased(x);
    if (leased && (unlimited || windowsNode == null && rpuNode != null && whole(rpuNode, "requests_per_unit", UINT32_MAX) == 0)) {
      throw error(get(x, "mode"), "mode: leased needs a limit to lease; this descriptor's rate_limit is "
          + (unlimited ? "unlimited" : "0 (every request over the limit)"));
    }
    List<Window> windows = new ArrayList<>();
    EnvoyUnit unit = null;
    if (windowsNode != null) {
      if (unitNode != null || rpuNode != null || unlimited) {
        throw error(unitNode != null ? unitNode : rpuNode != null ? rpuNode : get(r, "unlimited"),
            "a descriptor with sluice.windows takes its limits from there; rate_limit may then hold only name and replaces");
      }
      List<Node> ws = list(windowsNode, "sluice.windows");
      if (ws.isEmpty()) {
        throw error(windowsNode, "sluice.windows needs at least one window");
      }
      for (Node w : ws) {
        MapNode wm = fields(w, "a window", WINDOW_KEYS);
        Node lim = get(wm, "limit");
        Node per = get(wm, "period");
        if (lim == null || per == null) {
          throw error(w, "a window needs both limit and period");
        }
        long l = whole(lim, "limit", Long.MAX_VALUE);
        if (l < 1) {
          throw error(lim, "limit must be >= 1, was " + l);
        }
        windows.add(new Window(l, duration(per, "period", false)));
      }
    } else {
      if (rl == null) {
        throw error(ext, "a sluice block needs windows, or a rate_limit beside it");
      }
      String unitText = unitNode == null || isNull(unitNode) ? "" : text(unitNode, "unit");
      unit = EnvoyUnit.fromConfigName(unitText);
      if (unlimited) {
        if (unit != null) {
          throw error(unitNode, "should not specify rate limit unit when unlimited");
        }
        return new EnvoyLimit(path, null, name, replaces, true, false, shadow, quota, metadata, null);
      }
      if (unit == null) {
        throw error(unitNode != null ? unitNode : rl, "invalid rate limit unit '" + unitText
            + "'; expected one of second, minute, hour, day, week, month, year");
      }
      long rpu = rpuNode == null ? 0 : whole(rpuNode, "requests_per_unit", UINT32_MAX);
      if (rpu == 0) {
        // Envoy's own service over-limits every request of a limit of zero.
        return new EnvoyLimit(path, null, name, replaces, false, true, shadow, quota, metadata, unit);
      }
      windows.add(new Window(rpu, unit.period()));
    }

    // A quota-mode limit never denies a request on its own (see EnvoyLimit#quota): its rule counts
    // and reports like a shadow rule, and the front end decides what its excess means.
    Rule.Builder b = Rule.builder(EnvoyRuleNames.of(path)).windows(windows).shadow(shadow || quota)
        .algorithm(Algorithm.FIXED_WINDOW);
    try {
      Node alg = get(x, "algorithm");
      if (alg != null) {
        b.algorithm(Algorithm.fromConfigName(text(alg, "algorithm")));
      }
      Node fm = get(x, "failure_mode");
      if (fm != null) {
        b.failureMode(FailureMode.fromConfigName(text(fm, "failure_mode")));
      }
      Node mw = get(x, "max_wait");
      if (mw != null) {
        b.maxWait(duration(mw, "max_wait", true));
      }
      if (leased) {
        b.lease(lease(x, windows));
      }
      return new EnvoyLimit(path, b.build(), name, replaces, false, false, shadow, quota, metadata, unit);
    } catch (IllegalArgumentException e) {
      throw error(ext, e.getMessage());
    }
  }

  /** Whether the {@code sluice} block says {@code mode: leased}; lease settings need it. */
  private static boolean leased(MapNode x) throws ConfigException {
    Node mode = get(x, "mode");
    String text = mode == null ? "exact" : text(mode, "mode");
    if (!text.equals("exact") && !text.equals("leased")) {
      throw error(mode, "mode must be exact or leased, was '" + text + "'");
    }
    if (text.equals("exact")) {
      for (String k : LEASE_KEYS) {
        if (get(x, k) != null) {
          throw error(get(x, k), k + " applies only to mode: leased");
        }
      }
    }
    return text.equals("leased");
  }

  /** Leased mode's settings, as the native format reads them: unset ones follow the windows. */
  private static LeasePolicy lease(MapNode x, List<Window> windows) throws ConfigException {
    Duration shortest = windows.stream().map(Window::period).min(Duration::compareTo).orElseThrow();
    Node length = get(x, "lease_length");
    Node interval = get(x, "report_interval");
    Node slack = get(x, "lease_slack");
    Double share = null;
    if (slack != null) {
      String t = text(slack, "lease_slack").trim();
      try {
        share = t.endsWith("%") ? Double.parseDouble(t.substring(0, t.length() - 1).trim()) / 100 : Double.parseDouble(t);
      } catch (NumberFormatException e) {
        throw error(slack, "lease_slack must be a percentage such as 1% or a fraction such as 0.01, was '" + t + "'");
      }
    }
    try {
      return LeasePolicy.withDefaults(shortest, length == null ? null : duration(length, "lease_length", false),
          interval == null ? null : duration(interval, "report_interval", false), share);
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      throw error(m.startsWith("lease_slack") && slack != null ? slack : m.startsWith("report_interval") && interval != null
          ? interval : length != null ? length : get(x, "mode"), m);
    }
  }

  /**
   * A descriptor's {@code metadata}, any mapping, as plain values (maps, lists, strings, numbers
   * as doubles, booleans, nulls): the service turns it into the protobuf {@code Struct} Envoy's
   * service puts in its answer; null without one.
   */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> metadata(Node n) throws ConfigException {
    if (n == null || isNull(n)) {
      return null;
    }
    if (!(n instanceof MapNode)) {
      throw error(n, "metadata must be a mapping, was " + describe(n));
    }
    return (Map<String, Object>) metadataValue(n);
  }

  private static Object metadataValue(Node n) {
    if (n instanceof MapNode m) {
      Map<String, Object> b = new LinkedHashMap<>();
      for (Field f : m.fields().values()) {
        b.put(f.name(), metadataValue(f.value()));
      }
      return Collections.unmodifiableMap(b);
    }
    if (n instanceof ListNode l) {
      List<Object> b = new ArrayList<>();
      for (Node e : l.items()) {
        b.add(metadataValue(e));
      }
      return Collections.unmodifiableList(b);
    }
    ScalarNode s = (ScalarNode) n;
    if (s.isNull()) {
      return null;
    }
    if (s.isBoolean()) {
      return s.isTrue();
    }
    if (s.isNumber()) {
      // Protobuf's Value holds every number as a double; so does the metadata.
      return s.number().doubleValue();
    }
    return s.text();
  }

  /** A period ({@code > 0}) or a wait ({@code >= 0}), written as in the native format. */
  private static Duration duration(Node node, String what, boolean zeroAllowed) throws ConfigException {
    String text = text(node, what);
    Duration d;
    try {
      d = ConfigLoader.parseDuration(text, what);
    } catch (IllegalArgumentException e) {
      throw error(node, e.getMessage());
    }
    if (d.isNegative() || d.isZero() && !zeroAllowed) {
      throw error(node, what + " must be " + (zeroAllowed ? ">= 0" : "> 0") + ", was '" + text + "'");
    }
    return d;
  }

  // Envoy's service stops at its first mistake and says it in its own words; so does this reader,
  // over the YAML tree that the native reader reads too.

  /** The mapping {@code n}, whose keys must all be {@code allowed}. */
  private static MapNode fields(Node n, String what, Set<String> allowed) throws ConfigException {
    if (!(n instanceof MapNode m)) {
      throw error(n, what + " must be a mapping, was " + describe(n));
    }
    for (Field f : m.fields().values()) {
      if (!allowed.contains(f.name())) {
        throw new ConfigException(ConfigProblem.at(f.at(), "unknown field '" + f.name() + "' in " + what
            + "; expected one of " + String.join(", ", allowed.stream().sorted().toList())));
      }
    }
    return m;
  }

  /** The value of field {@code name} of {@code m}; null if {@code m} is null or has no such field. */
  private static Node get(MapNode m, String name) {
    Field f = m == null ? null : m.field(name);
    return f == null ? null : f.value();
  }

  private static List<Node> list(Node n, String what) throws ConfigException {
    if (!(n instanceof ListNode l)) {
      throw error(n, what + " must be a list, was " + describe(n));
    }
    return l.items();
  }

  /** The text of a scalar: strings, numbers and booleans alike. */
  private static String text(Node n, String what) throws ConfigException {
    if (!(n instanceof ScalarNode s) || s.isNull()) {
      throw error(n, what + " must be a string, was " + describe(n));
    }
    return s.text();
  }

  /** A whole number from 0 to {@code max}, written in decimal digits (with {@code _} allowed). */
  private static long whole(Node n, String what, long max) throws ConfigException {
    if (!(n instanceof ScalarNode s) || !s.isInteger()) {
      throw error(n, what + " must be an integer, was " + describe(n));
    }
    long v;
    try {
      v = Long.parseLong(s.text().replace("_", ""));
    } catch (NumberFormatException e) {
      throw error(n, what + " must be an integer between 0 and " + max + ", was " + s.text());
    }
    if (v < 0 || v > max) {
      throw error(n, what + " must be an integer between 0 and " + max + ", was " + s.text());
    }
    return v;
  }

  private static String optText(Node n, String what) throws ConfigException {
    return n == null || isNull(n) ? null : text(n, what);
  }

  private static boolean optBool(Node n, String what) throws ConfigException {
    if (n == null || isNull(n)) {
      return false;
    }
    if (!(n instanceof ScalarNode s) || !s.isBoolean()) {
      throw error(n, what + " must be true or false, was " + describe(n));
    }
    return s.isTrue();
  }

  private static boolean isNull(Node n) {
    return n instanceof ScalarNode s && s.isNull();
  }

  private static ConfigException error(Node n, String message) {
    return new ConfigException(ConfigProblem.at(n.location(), message));
  }

  /** A node as messages show it: {@code a mapping}, {@code 'text'} for a string, {@code 5} for a number. */
  private static String describe(Node n) {
    if (n instanceof MapNode) {
      return "a mapping";
    }
    if (n instanceof ListNode) {
      return "a list";
    }
    ScalarNode s = (ScalarNode) n;
    return s.isNull() ? "empty" : s.isString() ? "'" + s.text() + "'" : s.text();
  }
}
