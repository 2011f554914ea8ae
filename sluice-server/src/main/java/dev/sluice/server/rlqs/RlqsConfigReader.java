package dev.sluice.server.rlqs;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import dev.sluice.config.yaml.YamlTree;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the top-level {@code rlqs:} list of a native file (the rest of the file is the native
 * reader's):
 *
 * <pre>{@code
 * rlqs:
 *   - domain: edge
 *     buckets:
 *       - {when: {name: per_tenant}, rule: tenant.requests, key: "tenant:{tenant}"}
 *     unmatched: allow
 * }</pre>
 *
 * Every problem is collected with its file, line and column. Whether the rules exist and are
 * leased is checked once every file is read ({@link RlqsConfig#merge}).
 */
public final class RlqsConfigReader {
  /** The top-level key of the section. */
  public static final String KEY = "rlqs";
  private static final List<String> DOMAIN_KEYS = List.of("domain", "buckets", "unmatched");
  private static final List<String> BUCKET_KEYS = List.of("when", "rule", "key");
  private static final Set<String> UNMATCHED = Set.of("allow", "deny");

  private final List<ConfigProblem> problems = new ArrayList<>();

  private RlqsConfigReader() {}

  /**
   * The domains of {@code text}'s {@code rlqs:} section; none if it has none.
   *
   * @param file the name used in problems
   * @throws ConfigException with every problem of the section
   */
  public static List<RlqsDomain> read(String text, String file) throws ConfigException {
    Node root = YamlTree.read(text, file);
    if (!(root instanceof MapNode map) || map.field(KEY) == null) {
      return List.of();
    }
    RlqsConfigReader r = new RlqsConfigReader();
    List<RlqsDomain> out = r.readSection(map.field(KEY).value());
    if (!r.problems.isEmpty()) {
      throw new ConfigException(r.problems);
    }
    return out;
  }

  private List<RlqsDomain> readSection(Node section) {
    List<RlqsDomain> out = new ArrayList<>();
    if (!(section instanceof ListNode list)) {
      error(section.location(), "'" + KEY + "' must be a list of domains, found " + section.describe());
      return out;
    }
    Map<String, ConfigLocation> seen = new LinkedHashMap<>();
    for (Node item : list.items()) {
      RlqsDomain d = readDomain(item);
      if (d == null) {
        continue;
      }
      ConfigLocation first = seen.putIfAbsent(d.domain(), d.at());
      if (first != null) {
        error(d.at(), "duplicate rlqs domain '" + d.domain() + "' (first at " + first + ")");
        continue;
      }
      out.add(d);
    }
    return out;
  }

  private RlqsDomain readDomain(Node item) {
    MapNode m = mapping(item, "an rlqs domain", DOMAIN_KEYS);
    if (m == null) {
      return null;
    }
    int before = problems.size();
    String domain = requiredText(m, "domain", "an rlqs domain");
    List<BucketMapping> buckets = new ArrayList<>();
    Field bf = m.field("buckets");
    if (bf == null) {
      error(m.location(), "an rlqs domain needs 'buckets', the list mapping buckets to rules");
    } else if (!(bf.value() instanceof ListNode bl)) {
      error(bf.value().location(), "'buckets' must be a list, found " + bf.value().describe());
    } else {
      for (Node b : bl.items()) {
        BucketMapping bm = readBucket(b);
        if (bm != null) {
          buckets.add(bm);
        }
      }
    }
    boolean deny = false;
    Field uf = m.field("unmatched");
    if (uf != null) {
      String u = uf.value() instanceof ScalarNode s && s.isString() ? s.text() : null;
      if (u == null || !UNMATCHED.contains(u)) {
        error(uf.value().location(), "'unmatched' must be allow or deny, found " + uf.value().describe());
      } else {
        deny = u.equals("deny");
      }
    }
    if (problems.size() > before || domain == null) {
      return null;
    }
    return new RlqsDomain(domain, m.field("domain").value().location(), buckets, deny);
  }

  private BucketMapping readBucket(Node item) {
    MapNode m = mapping(item, "a bucket mapping", BUCKET_KEYS);
    if (m == null) {
      return null;
    }
    int before = problems.size();
    Map<String, String> when = new LinkedHashMap<>();
    Field wf = m.field("when");
    if (wf != null) {
      if (!(wf.value() instanceof MapNode wm)) {
        error(wf.value().location(), "'when' must be a mapping of bucket names to values, found "
            + wf.value().describe());
      } else {
        for (Field p : wm.fields().values()) {
          if (!(p.value() instanceof ScalarNode s) || s.isNull() || s.text().isEmpty()) {
            error(p.value().location(), "the value of '" + p.name() + "' in 'when' must be a non-empty text, found "
                + p.value().describe());
          } else {
            when.put(p.name(), s.text());
          }
        }
      }
    }
    String rule = requiredText(m, "rule", "a bucket mapping");
    String key = requiredText(m, "key", "a bucket mapping");
    KeyTemplate template = null;
    if (key != null) {
      try {
        template = KeyTemplate.parse(key);
      } catch (IllegalArgumentException e) {
        error(m.field("key").value().location(), e.getMessage());
      }
    }
    if (problems.size() > before || rule == null || template == null) {
      return null;
    }
    return new BucketMapping(when, rule, template, m.field("rule").value().location());
  }

  /** The mapping {@code n} with only {@code allowed} keys, or null after recording why not. */
  private MapNode mapping(Node n, String what, List<String> allowed) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), what + " must be a mapping, found " + n.describe());
      return null;
    }
    boolean ok = true;
    for (Field f : m.fields().values()) {
      if (!allowed.contains(f.name())) {
        error(f.at(), "unknown field '" + f.name() + "' in " + what + " (expected one of: "
            + String.join(", ", allowed) + ")");
        ok = false;
      }
    }
    return ok ? m : null;
  }

  private String requiredText(MapNode m, String name, String what) {
    Field f = m.field(name);
    if (f == null) {
      error(m.location(), what + " needs '" + name + "'");
      return null;
    }
    if (!(f.value() instanceof ScalarNode s) || !s.isString() || s.text().isEmpty()) {
      error(f.value().location(), "'" + name + "' must be a non-empty text, found " + f.value().describe());
      return null;
    }
    return s.text();
  }

  private void error(ConfigLocation at, String message) {
    problems.add(ConfigProblem.at(at, message));
  }
}
