package dev.sluice.server.envoy;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.server.config.YamlNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads an Envoy rate limit service configuration file (envoyproxy/ratelimit's YAML) into an
 * {@link EnvoyDomain}. Envoy's rules apply: a descriptor needs a key; a limit needs a valid unit
 * unless it is unlimited; an omitted {@code requests_per_unit} is 0, which blocks everything;
 * repeated descriptors and unknown fields are errors. The {@code sluice} block is Sluice's
 * extension: several windows and an algorithm for one descriptor, decided as one transaction.
 * Envoy's own service counts in fixed windows aligned to the unit, so that is the default
 * algorithm here.
 */
public final class EnvoyConfigParser {
  private static final Set<String> ROOT_KEYS = Set.of("domain", "descriptors");
  private static final Set<String> DESCRIPTOR_KEYS =
      Set.of("key", "value", "rate_limit", "descriptors", "shadow_mode", "detailed_metric", "sluice");
  private static final Set<String> RATE_LIMIT_KEYS = Set.of("unit", "requests_per_unit", "unlimited", "name", "replaces");
  private static final Set<String> REPLACES_KEYS = Set.of("name");
  private static final Set<String> SLUICE_KEYS = Set.of("algorithm", "windows", "failure_mode", "max_wait");
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
    YamlNode root = YamlNode.parse(file, yaml);
    root.onlyKeys("an Envoy rate limit file", ROOT_KEYS);
    Map<String, YamlNode> top = root.asMap("an Envoy rate limit file");
    YamlNode d = top.get("domain");
    String domain = d == null ? "" : d.kind() == YamlNode.Kind.NULL ? "" : d.asText("domain");
    if (domain.isEmpty()) {
      throw (d == null ? root : d).error("config file cannot have an empty domain");
    }
    List<Rule> rules = new ArrayList<>();
    Map<String, ConfigLocation> origins = new LinkedHashMap<>();
    EnvoyDescriptors tree = new EnvoyDescriptors();
    YamlNode ds = top.get("descriptors");
    if (ds != null && ds.kind() != YamlNode.Kind.NULL) {
      readLevel(domain, ds, tree, rules, origins);
    }
    return new EnvoyDomain(domain, d.location(), tree, rules, origins);
  }

  private static void readLevel(String parentPath, YamlNode list, EnvoyDescriptors level, List<Rule> rules,
      Map<String, ConfigLocation> origins) throws ConfigException {
    for (YamlNode dn : list.asList("descriptors")) {
      dn.onlyKeys("a descriptor", DESCRIPTOR_KEYS);
      Map<String, YamlNode> m = dn.asMap("a descriptor");
      String key = optText(m.get("key"), "key");
      if (key == null || key.isEmpty()) {
        throw dn.error("descriptor has an empty key");
      }
      String value = optText(m.get("value"), "value");
      if (value != null && value.isEmpty()) {
        value = null;
      }
      String path = parentPath + "/" + key + (value == null ? "" : ":" + value);
      boolean shadow = optBool(m.get("shadow_mode"), "shadow_mode");
      optBool(m.get("detailed_metric"), "detailed_metric");
      EnvoyLimit limit = readLimit(path, dn, m.get("rate_limit"), m.get("sluice"), shadow);
      if (limit != null && limit.rule() != null) {
        rules.add(limit.rule());
        origins.put(limit.rule().name(), dn.location());
      }
      EnvoyDescriptors children = new EnvoyDescriptors();
      YamlNode sub = m.get("descriptors");
      if (sub != null && sub.kind() != YamlNode.Kind.NULL) {
        readLevel(path, sub, children, rules, origins);
      }
      if (!level.add(new EnvoyDescriptors.Node(key, value, limit, children))) {
        throw dn.error("duplicate descriptor composite key '" + path + "'");
      }
    }
  }

  private static EnvoyLimit readLimit(String path, YamlNode dn, YamlNode rl, YamlNode ext, boolean shadow)
      throws ConfigException {
    if (rl == null && ext == null) {
      return null;
    }
    Map<String, YamlNode> r = Map.of();
    if (rl != null) {
      rl.onlyKeys("rate_limit", RATE_LIMIT_KEYS);
      r = rl.asMap("rate_limit");
    }
    String name = optText(r.get("name"), "rate_limit name");
    if (name != null && name.isEmpty()) {
      name = null;
    }
    List<String> replaces = new ArrayList<>();
    YamlNode rep = r.get("replaces");
    if (rep != null && rep.kind() != YamlNode.Kind.NULL) {
      for (YamlNode e : rep.asList("replaces")) {
        e.onlyKeys("a replaces entry", REPLACES_KEYS);
        String n = optText(e.asMap("a replaces entry").get("name"), "replaces name");
        if (n == null || n.isEmpty()) {
          throw e.error("should not have an empty replaces entry");
        }
        if (n.equals(name)) {
          throw e.error("replaces should not contain the name of its own rate limit '" + n + "'");
        }
        replaces.add(n);
      }
    }

    Map<String, YamlNode> x = Map.of();
    if (ext != null) {
      ext.onlyKeys("sluice", SLUICE_KEYS);
      x = ext.asMap("sluice");
    }
    YamlNode windowsNode = x.get("windows");
    boolean unlimited = optBool(r.get("unlimited"), "unlimited");
    YamlNode unitNode = r.get("unit");
    YamlNode rpuNode = r.get("requests_per_unit");

    List<Window> windows = new ArrayList<>();
    EnvoyUnit unit = null;
    if (windowsNode != null) {
      if (unitNode != null || rpuNode != null || unlimited) {
        throw (unitNode != null ? unitNode : rpuNode != null ? rpuNode : r.get("unlimited")).error(
            "a descriptor with sluice.windows takes its limits from there; rate_limit may then hold only name and replaces");
      }
      List<YamlNode> ws = windowsNode.asList("sluice.windows");
      if (ws.isEmpty()) {
        throw windowsNode.error("sluice.windows needs at least one window");
      }
      for (YamlNode w : ws) {
        w.onlyKeys("a window", WINDOW_KEYS);
        Map<String, YamlNode> wm = w.asMap("a window");
        YamlNode lim = wm.get("limit");
        YamlNode per = wm.get("period");
        if (lim == null || per == null) {
          throw w.error("a window needs both limit and period");
        }
        long l = lim.asLong("limit", Long.MAX_VALUE);
        if (l < 1) {
          throw lim.error("limit must be >= 1, was " + l);
        }
        windows.add(new Window(l, duration(per, "period", false)));
      }
    } else {
      if (rl == null) {
        throw ext.error("a sluice block needs windows, or a rate_limit beside it");
      }
      String unitText = unitNode == null || unitNode.kind() == YamlNode.Kind.NULL ? "" : unitNode.asText("unit");
      unit = EnvoyUnit.fromConfigName(unitText);
      if (unlimited) {
        if (unit != null) {
          throw unitNode.error("should not specify rate limit unit when unlimited");
        }
        return new EnvoyLimit(path, null, name, replaces, true, false, shadow, null);
      }
      if (unit == null) {
        throw (unitNode != null ? unitNode : rl).error("invalid rate limit unit '" + unitText
            + "'; expected one of second, minute, hour, day, week, month, year");
      }
      long rpu = rpuNode == null ? 0 : rpuNode.asLong("requests_per_unit", UINT32_MAX);
      if (rpu == 0) {
        // Envoy's own service over-limits every request of a limit of zero.
        return new EnvoyLimit(path, null, name, replaces, false, true, shadow, unit);
      }
      windows.add(new Window(rpu, unit.period()));
    }

    Rule.Builder b = Rule.builder(EnvoyRuleNames.of(path)).windows(windows).shadow(shadow)
        .algorithm(Algorithm.FIXED_WINDOW);
    try {
      YamlNode alg = x.get("algorithm");
      if (alg != null) {
        b.algorithm(Algorithm.fromConfigName(alg.asText("algorithm")));
      }
      YamlNode fm = x.get("failure_mode");
      if (fm != null) {
        b.failureMode(FailureMode.fromConfigName(fm.asText("failure_mode")));
      }
      YamlNode mw = x.get("max_wait");
      if (mw != null) {
        b.maxWait(duration(mw, "max_wait", true));
      }
    } catch (IllegalArgumentException e) {
      throw ext.error(e.getMessage());
    }
    return new EnvoyLimit(path, b.build(), name, replaces, false, false, shadow, unit);
  }

  /** A period ({@code > 0}) or a wait ({@code >= 0}), written as in the native format. */
  private static Duration duration(YamlNode node, String what, boolean zeroAllowed) throws ConfigException {
    String text = node.asText(what);
    Duration d;
    try {
      d = ConfigLoader.parseDuration(text, what);
    } catch (IllegalArgumentException e) {
      throw node.error(e.getMessage());
    }
    if (d.isNegative() || d.isZero() && !zeroAllowed) {
      throw node.error(what + " must be " + (zeroAllowed ? ">= 0" : "> 0") + ", was '" + text + "'");
    }
    return d;
  }

  private static String optText(YamlNode n, String what) throws ConfigException {
    if (n == null || n.kind() == YamlNode.Kind.NULL) {
      return null;
    }
    return n.asText(what);
  }

  private static boolean optBool(YamlNode n, String what) throws ConfigException {
    if (n == null || n.kind() == YamlNode.Kind.NULL) {
      return false;
    }
    return n.asBoolean(what);
  }
}
