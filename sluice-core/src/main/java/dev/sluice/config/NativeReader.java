package dev.sluice.config;

import dev.sluice.Algorithm;
import dev.sluice.Attribute;
import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.LiveLimit;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.FailureMode;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import dev.sluice.config.yaml.YamlTree;
import dev.sluice.internal.policy.AccessList;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Turns one native YAML file into rules. Every field is checked against a whitelist and every
 * value against its type and range; all problems are collected, and a file with any problem
 * yields no rules at all.
 */
final class NativeReader {
  static final String ROOT_KEY = "limits";

  static final String OPERATIONS_KEY = "operations";
  static final String ATTRIBUTES_KEY = "attributes";
  static final String TIERS_KEY = "tiers";
  static final List<String> ROOT_FIELDS = List.of(ROOT_KEY, OPERATIONS_KEY, ATTRIBUTES_KEY, TIERS_KEY);
  private static final List<String> OPERATION_FIELDS = List.of("name", "items");
  private static final List<String> ITEM_FIELDS = List.of("rule", "key", "when", "unless", "cost");
  private static final List<String> ATTRIBUTE_FIELDS = List.of("type", "group", "group6");
  private static final List<String> RULE_FIELDS =
      List.of("name", "algorithm", "config", "precision", "max_wait", "overrides", "shadow", "failure_mode", "ban",
          "audit", "allow", "deny");
  private static final List<String> BAN_FIELDS = List.of("after", "within", "for");
  private static final List<String> AUDIT_FIELDS = List.of("keep", "attribute");
  /** Tier names: as attribute names. */
  private static final Pattern TIER_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
  private static final List<String> WINDOW_FIELDS = List.of("limit", "period");
  private static final List<String> OVERRIDE_FIELDS = List.of("keys", "config");

  /** Beyond this, arithmetic on limits (limit × interval) could overflow. */
  static final long MAX_LIMIT = 1_000_000_000_000_000L;
  /** The exact log keeps one entry per unit in an array. */
  static final long MAX_SLIDING_LOG_LIMIT = Integer.MAX_VALUE - 8;

  private static final Pattern PLAIN_INTEGER = Pattern.compile("[-+]?(0|[1-9][0-9_]*)");

  private final String file;
  private final List<ConfigProblem> errors = new ArrayList<>();
  private final List<ConfigProblem> warnings = new ArrayList<>();
  private final Map<String, ConfigLocation> origins = new LinkedHashMap<>();
  private final List<Operation> operations = new ArrayList<>();
  private final List<Attribute> attributes = new ArrayList<>();
  private final Map<String, List<ConfigLocation>> operationOrigins = new LinkedHashMap<>();
  private final Map<String, ConfigLocation> attributeOrigins = new LinkedHashMap<>();
  private final Map<String, List<Window>> tiers = new LinkedHashMap<>();
  private final Map<String, ConfigLocation> tierOrigins = new LinkedHashMap<>();
  private final Map<String, List<String>> allow = new LinkedHashMap<>();
  private final Map<String, List<String>> deny = new LinkedHashMap<>();
  private final Map<String, ConfigLocation> auditOrigins = new LinkedHashMap<>();
  /** Errors found, including those not listed because their place already has one. */
  private int errorCount;

  private NativeReader(String file) {
    this.file = file;
  }

  static LoadedConfig read(String source, String file) throws ConfigException {
    return new NativeReader(file).read(source);
  }

  private LoadedConfig read(String source) throws ConfigException {
    Node root = YamlTree.parse(source, file, errors);
    List<Rule> rules = new ArrayList<>();
    if (root == null && errors.isEmpty()) {
      error(new ConfigLocation(file, 1, 1), "the file is empty; expected a '" + ROOT_KEY + "' list of rules");
    } else if (root != null) {
      readRoot(root, rules);
    }
    if (!errors.isEmpty()) {
      errors.sort(Comparator.comparingInt(ConfigProblem::line).thenComparingInt(ConfigProblem::column));
      throw new ConfigException(errors);
    }
    warnings.sort(Comparator.comparingInt(ConfigProblem::line).thenComparingInt(ConfigProblem::column));
    return new LoadedConfig(RuleSet.of(rules), warnings, origins, operations, attributes, operationOrigins,
        attributeOrigins, tiers, tierOrigins, allow, deny, auditOrigins);
  }

  private void error(ConfigLocation at, String message) {
    errorCount++;
    // One error per place: a value already reported (an alias, say) must not be reported again
    // as the wrong type.
    for (ConfigProblem p : errors) {
      if (p.line() == at.line() && p.column() == at.column() && at.line() > 0) {
        return;
      }
    }
    errors.add(ConfigProblem.at(at, message));
  }

  private void warn(ConfigLocation at, String message) {
    warnings.add(ConfigProblem.at(at, message));
  }

  private void readRoot(Node root, List<Rule> rules) {
    if (!(root instanceof MapNode map)) {
      error(root.location(), "expected a mapping with a '" + ROOT_KEY + "' list, found " + root.describe());
      return;
    }
    Field domain = map.field("domain");
    if (domain != null && map.field(ROOT_KEY) == null) {
      error(domain.at(), "a top-level 'domain' marks an Envoy rate limit configuration, which the sluice service "
          + "reads; this loader reads the native format (a top-level '" + ROOT_KEY + "' list)");
      return;
    }
    checkFields(map, ROOT_FIELDS);
    Field limits = map.field(ROOT_KEY);
    if (limits == null && map.field(OPERATIONS_KEY) == null && map.field(ATTRIBUTES_KEY) == null
        && map.field(TIERS_KEY) == null) {
      missing(map, ROOT_KEY, ROOT_FIELDS, "missing '" + ROOT_KEY + "' (the list of rules)");
      return;
    }
    // A file may hold operations (and attributes) alone, over rules defined in other files; or
    // tiers alone.
    if (limits != null) {
      if (!(limits.value() instanceof ListNode list)) {
        error(limits.value().location(), "'" + ROOT_KEY + "' must be a list of rules, found " + limits.value().describe());
        return;
      }
      Map<String, ConfigLocation> names = new LinkedHashMap<>();
      for (int i = 0; i < list.items().size(); i++) {
        Rule r = readRule(list.items().get(i), i + 1, names);
        if (r != null) {
          rules.add(r);
        }
      }
    }
    Field attrs = map.field(ATTRIBUTES_KEY);
    if (attrs != null) {
      readAttributes(attrs);
    }
    Field tf = map.field(TIERS_KEY);
    if (tf != null) {
      readTiers(tf);
    }
    Field ops = map.field(OPERATIONS_KEY);
    if (ops != null) {
      readOperations(ops);
    }
  }

  /** {@code tiers: {free: [{limit: 10, period: 1m}], premium: [...]}}. */
  private void readTiers(Field f) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "'" + TIERS_KEY + "' must be a mapping of tier names to lists of windows, such as "
          + "{free: [{limit: 10, period: 1m}]}, found " + f.value().describe());
      return;
    }
    if (m.fields().size() > RuleSet.MAX_TIERS) {
      error(m.location(), "'" + TIERS_KEY + "' names " + m.fields().size() + " tiers; the maximum is " + RuleSet.MAX_TIERS);
      return;
    }
    for (Field t : m.fields().values()) {
      int errorsBefore = errorCount;
      if (!TIER_NAME.matcher(t.name()).matches()) {
        error(t.at(), "tier name must be 1-64 letters, digits, _ . -, found '" + t.name() + "'");
      }
      String label = "tier '" + t.name() + "'";
      List<Window> ws = null;
      if (!(t.value() instanceof ListNode list)) {
        error(t.value().location(), label + " must be a list of windows, each with limit and period, found "
            + t.value().describe());
      } else if (list.items().isEmpty()) {
        error(list.location(), label + " has no window; a tier needs at least one");
      } else if (list.items().size() > LiveLimit.MAX_WINDOWS) {
        error(list.location(), label + " has " + list.items().size() + " windows; the maximum is "
            + LiveLimit.MAX_WINDOWS);
      } else {
        ws = new ArrayList<>();
        for (Node n : list.items()) {
          // A tier may be given to a key of any rule: its algorithm is checked when it is.
          ws.add(window(n, null));
        }
      }
      if (errorCount > errorsBefore || ws == null || ws.contains(null)) {
        continue;
      }
      tiers.put(t.name(), List.copyOf(ws));
      tierOrigins.put(t.name(), t.at());
    }
  }

  /** {@code ban: {after: 5, within: 1m, for: 15m}}, or null after recording errors. */
  private BanPolicy ban(Field f) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "ban must be a mapping such as {after: 5, within: 1m, for: 15m}, found "
          + f.value().describe());
      return null;
    }
    int errorsBefore = errorCount;
    checkFields(m, BAN_FIELDS);
    Long after = null;
    Field af = m.field("after");
    if (af == null) {
      missing(m, "after", BAN_FIELDS, "ban has no 'after' (how many denials within 'within' start a ban)");
    } else {
      after = wholeNumber(af, "ban.after", 1, BanPolicy.MAX_AFTER);
    }
    Duration within = banDuration(m, "within", BanPolicy.MAX_WITHIN, "1d", "the period denials are counted over");
    Duration duration = banDuration(m, "for", BanPolicy.MAX_DURATION, "30d", "how long a ban lasts");
    if (errorCount > errorsBefore || after == null || within == null || duration == null) {
      return null;
    }
    return new BanPolicy(after, within, duration);
  }

  private Duration banDuration(MapNode m, String field, Duration max, String maxText, String meaning) {
    Field f = m.field(field);
    String what = "ban." + field;
    if (f == null) {
      missing(m, field, BAN_FIELDS, "ban has no '" + field + "' (" + meaning + ")");
      return null;
    }
    Long micros = duration(f.value(), what, false);
    if (micros == null) {
      return null;
    }
    if (micros < 1000 || micros > max.toNanos() / 1000) {
      error(f.value().location(), what + " must be between 1ms and " + maxText + ", found " + ((ScalarNode) f.value()).text());
      return null;
    }
    return Duration.ofNanos(micros * 1000);
  }

  /** {@code audit: {keep: 10, attribute: user}}, or null after recording errors. */
  private AuditPolicy audit(Field f, ConfigLocation[] attributeAt) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "audit must be a mapping such as {keep: 10, attribute: user}, found "
          + f.value().describe());
      return null;
    }
    int errorsBefore = errorCount;
    checkFields(m, AUDIT_FIELDS);
    Long keep = null;
    Field kf = m.field("keep");
    if (kf == null) {
      missing(m, "keep", AUDIT_FIELDS, "audit has no 'keep' (how many distinct values to keep per key, 1 to "
          + AuditPolicy.MAX_KEEP + ")");
    } else {
      keep = wholeNumber(kf, "audit.keep", 1, AuditPolicy.MAX_KEEP);
    }
    String attribute = null;
    Field af = m.field("attribute");
    if (af == null) {
      missing(m, "attribute", AUDIT_FIELDS, "audit has no 'attribute' (the request attribute whose values are kept)");
    } else {
      attribute = string(af, "audit.attribute");
      attributeAt[0] = af.value().location();
      if (attribute != null) {
        try {
          Attribute.string(attribute);
        } catch (IllegalArgumentException e) {
          error(af.value().location(), "audit.attribute: " + e.getMessage());
        }
      }
    }
    if (errorCount > errorsBefore || keep == null || attribute == null) {
      return null;
    }
    return new AuditPolicy(keep.intValue(), attribute);
  }

  /** A whole number from {@code min} to {@code max}, or null after recording an error. */
  private Long wholeNumber(Field f, String what, long min, long max) {
    Node v = f.value();
    if (!(v instanceof ScalarNode s) || !s.isInteger()) {
      error(v.location(), what + " must be a whole number from " + min + " to " + max + ", found " + v.describe());
      return null;
    }
    if (!decimal(s, what)) {
      return null;
    }
    if (s.number().compareTo(BigDecimal.valueOf(min)) < 0 || s.number().compareTo(BigDecimal.valueOf(max)) > 0) {
      error(v.location(), what + " must be from " + min + " to " + max + ", found " + s.text());
      return null;
    }
    return s.number().longValueExact();
  }

  /**
   * A rule's {@code allow} or {@code deny} list, each entry checked as the limiter reads it, or
   * null after recording errors. {@code at} gets each entry's location.
   */
  private List<String> accessList(Field f, List<ConfigLocation> at) {
    String what = f.name();
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), what + " must be a list of entries (keys, prefixes ending in '*', or a prefix and a "
          + "CIDR range such as ip:10.0.0.0/8), found " + f.value().describe());
      return null;
    }
    if (list.items().size() > RuleSet.MAX_LIST_ENTRIES) {
      error(list.location(), what + " has " + list.items().size() + " entries; the maximum is "
          + RuleSet.MAX_LIST_ENTRIES);
      return null;
    }
    List<String> out = new ArrayList<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean ok = true;
    for (int i = 0; i < list.items().size(); i++) {
      Node n = list.items().get(i);
      if (!(n instanceof ScalarNode s) || !s.isString()) {
        String hint = n instanceof ScalarNode s && !s.isNull() ? " (quote it: \"" + s.text() + "\")" : "";
        error(n.location(), what + " entry " + (i + 1) + " must be a string, found " + n.describe() + hint);
        ok = false;
        continue;
      }
      String canonical;
      try {
        canonical = AccessList.checkEntry(s.text());
      } catch (IllegalArgumentException e) {
        error(n.location(), what + " entry " + (i + 1) + ": " + e.getMessage());
        ok = false;
        continue;
      }
      Integer first = seen.putIfAbsent(canonical, i + 1);
      if (first != null) {
        warn(n.location(), what + " entry " + (i + 1) + " ('" + s.text() + "') repeats entry " + first);
      }
      out.add(s.text());
      at.add(n.location());
    }
    return ok ? out : null;
  }

  /** Warns of deny entries the allow list also matches, and allow entries the deny list hides. */
  private void lintLists(String label, List<String> allowed, List<ConfigLocation> allowAt, List<String> denied,
      List<ConfigLocation> denyAt) {
    if (allowed == null || denied == null || allowed.isEmpty() || denied.isEmpty()) {
      return;
    }
    AccessList allowList = AccessList.of(allowed);
    AccessList denyList = AccessList.of(denied);
    for (int i = 0; i < denied.size(); i++) {
      if (allowList.covers(denied.get(i))) {
        warn(denyAt.get(i), label + ": deny entry '" + denied.get(i) + "' is also allowed (the allow list matches every "
            + "key it matches); the deny list is checked first, so those keys are denied");
      }
    }
    for (int i = 0; i < allowed.size(); i++) {
      if (denyList.covers(allowed.get(i))) {
        warn(allowAt.get(i), label + ": allow entry '" + allowed.get(i) + "' never applies: the deny list matches every"
            + " key it matches and is checked first");
      }
    }
  }

  /** {@code attributes: {ip: {type: ip, group: /24, group6: /64}, ...}}. */
  private void readAttributes(Field f) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "'" + ATTRIBUTES_KEY + "' must be a mapping of attribute names to {type, group, group6}, "
          + "found " + f.value().describe());
      return;
    }
    for (Field a : m.fields().values()) {
      if (!(a.value() instanceof MapNode spec)) {
        error(a.value().location(), "attribute '" + a.name() + "' must be a mapping such as {type: ip, group: /24}, found "
            + a.value().describe());
        continue;
      }
      int errorsBefore = errorCount;
      checkFields(spec, ATTRIBUTE_FIELDS);
      try {
        Attribute.string(a.name());
      } catch (IllegalArgumentException e) {
        error(a.at(), e.getMessage());
      }
      Attribute.Type type = null;
      Field tf = spec.field("type");
      if (tf == null) {
        missing(spec, "type", ATTRIBUTE_FIELDS, "attribute '" + a.name() + "' has no 'type' (ip or string)");
      } else {
        String text = string(tf, "type");
        type = text == null ? null : parseEnum(tf, text, Attribute.Type.values(), Attribute.Type::configName);
      }
      int v4 = prefix(spec.field("group"), type, 32);
      int v6 = prefix(spec.field("group6"), type, 128);
      if (errorCount > errorsBefore || type == null) {
        continue;
      }
      attributes.add(type == Attribute.Type.IP ? Attribute.ip(a.name(), v4, v6) : Attribute.string(a.name()));
      attributeOrigins.put(a.name(), a.at());
    }
  }

  /** A grouping prefix ({@code /24} or {@code 24}) from 0 to {@code max}, or NO_GROUPING if absent or bad. */
  private int prefix(Field f, Attribute.Type type, int max) {
    if (f == null) {
      return Attribute.NO_GROUPING;
    }
    if (type != null && type != Attribute.Type.IP) {
      error(f.at(), f.name() + " applies only to attributes of type ip");
      return Attribute.NO_GROUPING;
    }
    String family = max == 32 ? "IPv4" : "IPv6";
    String text = f.value() instanceof ScalarNode s && (s.isString() || s.isInteger())
        ? s.text() : null;
    String digits = text == null ? null : text.startsWith("/") ? text.substring(1) : text;
    if (digits == null || !digits.matches("0|[1-9][0-9]{0,2}") || Integer.parseInt(digits) > max) {
      error(f.value().location(), f.name() + " must be an " + family + " prefix length from /0 to /" + max + " (such as /"
          + (max == 32 ? 24 : 64) + "), found " + (text != null ? text : f.value().describe()));
      return Attribute.NO_GROUPING;
    }
    return Integer.parseInt(digits);
  }

  /** {@code operations: [{name, items: [{rule, key, when, unless, cost}, ...]}, ...]}. */
  private void readOperations(Field f) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "'" + OPERATIONS_KEY + "' must be a list of operations, each with name and items, found "
          + f.value().describe());
      return;
    }
    Map<String, ConfigLocation> names = new LinkedHashMap<>();
    for (int i = 0; i < list.items().size(); i++) {
      readOperation(list.items().get(i), i + 1, names);
    }
  }

  private void readOperation(Node n, int index, Map<String, ConfigLocation> names) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "operation " + index + " must be a mapping with 'name' and 'items', found " + n.describe());
      return;
    }
    int errorsBefore = errorCount;
    checkFields(m, OPERATION_FIELDS);
    String name = null;
    ConfigLocation nameAt = m.location();
    String label = "operation " + index;
    Field nf = m.field("name");
    if (nf == null) {
      missing(m, "name", OPERATION_FIELDS, "operation " + index + " has no 'name'");
    } else {
      nameAt = nf.value().location();
      name = string(nf, "name");
      if (name != null) {
        label = "operation '" + name + "'";
        ConfigLocation first = names.putIfAbsent(name, nameAt);
        if (first != null) {
          error(nameAt, "duplicate operation name '" + name + "' (first defined at line " + first.line() + ", column "
              + first.column() + ")");
        }
      }
    }
    List<OperationItem> items = new ArrayList<>();
    List<ConfigLocation> at = new ArrayList<>();
    at.add(nameAt);
    Field itf = m.field("items");
    if (itf == null) {
      missing(m, "items", OPERATION_FIELDS, label + " has no 'items' (its list of {rule, key})");
    } else if (!(itf.value() instanceof ListNode list)) {
      error(itf.value().location(), "'items' must be a list of {rule, key, when, unless, cost}, found " + itf.value().describe());
    } else if (list.items().isEmpty()) {
      error(list.location(), label + " has no items; an operation needs at least one");
    } else if (list.items().size() > Operation.MAX_ITEMS) {
      error(list.location(), label + " has " + list.items().size() + " items; the maximum is " + Operation.MAX_ITEMS);
    } else {
      for (Node item : list.items()) {
        OperationItem it = readOperationItem(item, label, at);
        if (it != null) {
          items.add(it);
        }
      }
    }
    if (errorCount > errorsBefore) {
      return;
    }
    Operation op;
    try {
      op = new Operation(name, items);
    } catch (IllegalArgumentException e) {
      error(nameAt, e.getMessage());
      return;
    }
    operations.add(op);
    operationOrigins.put(name, at);
  }

  private OperationItem readOperationItem(Node n, String label, List<ConfigLocation> at) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "an item of " + label + " must be a mapping such as {rule: per_user, key: \"user:{user}\"}, found "
          + n.describe());
      return null;
    }
    int errorsBefore = errorCount;
    checkFields(m, ITEM_FIELDS);
    String rule = null;
    ConfigLocation ruleAt = m.location();
    Field rf = m.field("rule");
    if (rf == null) {
      missing(m, "rule", ITEM_FIELDS, "an item of " + label + " has no 'rule'");
    } else {
      ruleAt = rf.value().location();
      rule = string(rf, "rule");
    }
    String key = null;
    Field kf = m.field("key");
    if (kf == null) {
      missing(m, "key", ITEM_FIELDS, "an item of " + label + " has no 'key' (a template such as \"user:{user}\")");
    } else {
      key = string(kf, "key");
      if (key != null) {
        try {
          OperationItem.of("r", key);
        } catch (IllegalArgumentException e) {
          error(kf.value().location(), e.getMessage());
        }
      }
    }
    String when = attributeName(m.field("when"));
    String unless = attributeName(m.field("unless"));
    if (when != null && when.equals(unless)) {
      error(m.field("unless").value().location(), "when and unless both name attribute '" + when
          + "': the item could never apply");
    }
    long cost = 1;
    Field cf = m.field("cost");
    if (cf != null) {
      if (!(cf.value() instanceof ScalarNode s) || !s.isInteger()) {
        error(cf.value().location(), "cost must be a whole number ≥ 0, found " + cf.value().describe());
      } else if (decimal(s, "cost")) {
        if (s.number().signum() < 0 || s.number().compareTo(BigDecimal.valueOf(MAX_LIMIT)) > 0) {
          error(cf.value().location(), "cost must be from 0 to " + MAX_LIMIT + ", found " + s.text());
        } else {
          cost = s.number().longValueExact();
        }
      }
    }
    if (errorCount > errorsBefore) {
      return null;
    }
    at.add(ruleAt);
    return new OperationItem(rule, key, when, unless, cost);
  }

  /** The attribute named by a {@code when} or {@code unless}, or null if absent or bad (recorded). */
  private String attributeName(Field f) {
    if (f == null) {
      return null;
    }
    String name = string(f, f.name());
    if (name == null) {
      return null;
    }
    try {
      return Attribute.string(name).name();
    } catch (IllegalArgumentException e) {
      error(f.value().location(), f.name() + ": " + e.getMessage());
      return null;
    }
  }

  private void unknownField(Field f, List<String> expected) {
    error(f.at(), "unknown field '" + f.name() + "' (expected one of: " + String.join(", ", expected) + ")");
  }

  private void checkFields(MapNode m, List<String> expected) {
    for (Field f : m.fields().values()) {
      if (!expected.contains(f.name())) {
        unknownField(f, expected);
      }
    }
  }

  /**
   * Reports a missing required field, unless the mapping has an unknown field that is probably
   * that one misspelt ({@code limt}): its error already says what to write.
   */
  private void missing(MapNode m, String field, List<String> expected, String message) {
    for (String name : m.fields().keySet()) {
      if (!expected.contains(name) && distance(name, field) <= 2) {
        errorCount++;
        return;
      }
    }
    error(m.location(), message);
  }

  /** Levenshtein distance, for telling a typo from a different field. */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  /** The rule, or null if it has errors (which are recorded). */
  private Rule readRule(Node n, int index, Map<String, ConfigLocation> names) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "rule " + index + " must be a mapping with 'name' and 'config', found " + n.describe());
      return null;
    }
    int errorsBefore = errorCount;
    checkFields(m, RULE_FIELDS);

    String name = null;
    ConfigLocation nameAt = m.location();
    Field nameField = m.field("name");
    String label = "rule " + index;
    if (nameField == null) {
      missing(m, "name", RULE_FIELDS, "rule " + index + " has no 'name'");
    } else {
      nameAt = nameField.value().location();
      name = string(nameField, "name");
      if (name != null) {
        try {
          Rule.builder(name);
          label = "rule '" + name + "'";
          ConfigLocation first = names.putIfAbsent(name, nameAt);
          if (first != null) {
            error(nameAt, "duplicate rule name '" + name + "' (first defined at line " + first.line() + ", column "
                + first.column() + ")");
          }
        } catch (IllegalArgumentException e) {
          error(nameAt, e.getMessage());
          name = null;
        }
      }
    }

    Algorithm algorithm = Algorithm.SLIDING_LOG;
    boolean algorithmKnown = true;
    Field alg = m.field("algorithm");
    if (alg != null) {
      String text = string(alg, "algorithm");
      algorithm = text == null ? null : parseEnum(alg, text, Algorithm.values(), Algorithm::configName);
      algorithmKnown = algorithm != null;
    }

    List<Window> windows = null;
    List<ConfigLocation> windowsAt = new ArrayList<>();
    Field config = m.field("config");
    if (config == null) {
      missing(m, "config", RULE_FIELDS, label + " has no 'config' (its list of windows, each with limit and period)");
    } else {
      windows = windows(config, algorithm, windowsAt);
    }

    Integer precision = null;
    Field prec = m.field("precision");
    if (prec != null) {
      if (algorithmKnown && algorithm != Algorithm.SLIDING_WINDOW) {
        error(prec.at(), "precision applies only to sliding_window rules; " + label + " uses " + algorithm.configName());
      } else {
        precision = precision(prec);
      }
    }

    Duration maxWait = null;
    Field mw = m.field("max_wait");
    if (mw != null) {
      if (algorithmKnown && algorithm != Algorithm.LEAKY_BUCKET) {
        error(mw.at(), "max_wait applies only to leaky_bucket rules; " + label + " uses " + algorithm.configName());
      } else {
        Long micros = duration(mw.value(), "max_wait", true);
        maxWait = micros == null ? null : Duration.ofNanos(micros * 1000);
      }
    }

    boolean shadow = false;
    Field sh = m.field("shadow");
    if (sh != null) {
      Boolean b = bool(sh);
      shadow = b != null && b;
    }

    FailureMode failureMode = FailureMode.OPEN;
    Field fm = m.field("failure_mode");
    if (fm != null) {
      String text = string(fm, "failure_mode");
      failureMode = text == null ? null : parseEnum(fm, text, FailureMode.values(), FailureMode::configName);
    }

    BanPolicy ban = null;
    Field bf = m.field("ban");
    if (bf != null) {
      ban = ban(bf);
    }

    AuditPolicy audit = null;
    ConfigLocation[] auditAt = new ConfigLocation[1];
    Field auf = m.field("audit");
    if (auf != null) {
      audit = audit(auf, auditAt);
    }

    List<ConfigLocation> allowAt = new ArrayList<>();
    Field alf = m.field("allow");
    List<String> allowed = alf == null ? List.of() : accessList(alf, allowAt);
    List<ConfigLocation> denyAt = new ArrayList<>();
    Field df = m.field("deny");
    List<String> denied = df == null ? List.of() : accessList(df, denyAt);

    List<KeyOverride> overrides = new ArrayList<>();
    List<List<ConfigLocation>> overrideWindowsAt = new ArrayList<>();
    List<List<ConfigLocation>> patternsAt = new ArrayList<>();
    Field ov = m.field("overrides");
    if (ov != null) {
      overrides(ov, algorithm, overrides, overrideWindowsAt, patternsAt);
    }

    if (errorCount > errorsBefore) {
      return null;
    }
    Rule.Builder b = Rule.builder(name).windows(windows).algorithm(algorithm).shadow(shadow).failureMode(failureMode);
    if (precision != null) {
      b.precision(precision);
    }
    if (maxWait != null) {
      b.maxWait(maxWait);
    }
    overrides.forEach(b::override);
    b.ban(ban).audit(audit);
    Rule rule = b.build();
    origins.put(name, nameAt);
    if (audit != null) {
      auditOrigins.put(name, auditAt[0]);
    }
    if (!allowed.isEmpty()) {
      allow.put(name, allowed);
    }
    if (!denied.isEmpty()) {
      deny.put(name, denied);
    }
    lint(rule, label, windowsAt, overrideWindowsAt, patternsAt);
    lintLists(label, allowed, allowAt, denied, denyAt);
    return rule;
  }

  private void lint(Rule rule, String label, List<ConfigLocation> windowsAt, List<List<ConfigLocation>> overrideWindowsAt,
      List<List<ConfigLocation>> patternsAt) {
    for (Lint.Finding f : Lint.windows(rule)) {
      warn(windowsAt.get(f.window()), label + ": " + f.message());
    }
    for (int i = 0; i < rule.overrides().size(); i++) {
      for (Lint.Finding f : Lint.overrideWindows(rule, i)) {
        warn(overrideWindowsAt.get(i).get(f.window()), label + ", override " + (i + 1) + ": " + f.message());
      }
    }
    for (Lint.PatternFinding f : Lint.shadowedPatterns(rule.overrides())) {
      warn(patternsAt.get(f.override()).get(f.pattern()), label + ", override " + (f.override() + 1) + ": " + f.message());
    }
  }

  /** A non-empty list of windows, or null after recording errors. */
  private List<Window> windows(Field f, Algorithm algorithm, List<ConfigLocation> at) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "'config' must be a list of windows, each with limit and period, found " + f.value().describe());
      return null;
    }
    if (list.items().isEmpty()) {
      error(list.location(), "'config' must have at least one window");
      return null;
    }
    List<Window> out = new ArrayList<>();
    boolean ok = true;
    for (Node n : list.items()) {
      Window w = window(n, algorithm);
      ok &= w != null;
      out.add(w);
      at.add(n.location());
    }
    return ok ? out : null;
  }

  private Window window(Node n, Algorithm algorithm) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "a window must be a mapping with 'limit' and 'period', found " + n.describe());
      return null;
    }
    checkFields(m, WINDOW_FIELDS);
    Long limit = null;
    Field lf = m.field("limit");
    if (lf == null) {
      missing(m, "limit", WINDOW_FIELDS, "window has no 'limit'");
    } else {
      limit = limit(lf, algorithm);
    }
    Long period = null;
    Field pf = m.field("period");
    if (pf == null) {
      missing(m, "period", WINDOW_FIELDS, "window has no 'period'");
    } else {
      period = duration(pf.value(), "period", false);
    }
    if (limit == null || period == null) {
      return null;
    }
    return new Window(limit, Duration.ofNanos(period * 1000));
  }

  private Long limit(Field f, Algorithm algorithm) {
    Node v = f.value();
    if (!(v instanceof ScalarNode s) || !s.isInteger()) {
      error(v.location(), "limit must be a whole number ≥ 1, found " + v.describe());
      return null;
    }
    if (!decimal(s, "limit")) {
      return null;
    }
    if (s.number().signum() <= 0) {
      error(v.location(), "limit must be ≥ 1, found " + s.text());
      return null;
    }
    if (s.number().compareTo(BigDecimal.valueOf(MAX_LIMIT)) > 0) {
      error(v.location(), "limit " + s.text() + " is too large; the maximum is " + MAX_LIMIT);
      return null;
    }
    long limit = s.number().longValueExact();
    if (algorithm == Algorithm.SLIDING_LOG && limit > MAX_SLIDING_LOG_LIMIT) {
      error(v.location(), "limit " + limit + " is too large for sliding_log (at most " + MAX_SLIDING_LOG_LIMIT
          + ": it keeps one entry per unit); use sliding_window or token_bucket for larger limits");
      return null;
    }
    return limit;
  }

  /** A period (> 0) or a wait (≥ 0) in microseconds, or null after recording an error. */
  private Long duration(Node v, String what, boolean zeroAllowed) {
    long micros;
    try {
      if (v instanceof ScalarNode s && s.isNumber()) {
        if (s.number() == null) {
          error(v.location(), what + " must be finite, found " + s.text());
          return null;
        }
        if (s.isInteger() && !decimal(s, what)) {
          return null;
        }
        micros = Durations.ofSeconds(s.number(), what, s.text());
      } else if (v instanceof ScalarNode s && s.isString()) {
        micros = Durations.parse(s.text(), what);
      } else {
        error(v.location(), what + " must be " + Durations.SYNTAX + ", found " + v.describe());
        return null;
      }
    } catch (IllegalArgumentException e) {
      error(v.location(), e.getMessage());
      return null;
    }
    if (micros < 0 || micros == 0 && !zeroAllowed) {
      error(v.location(), what + " must be " + (zeroAllowed ? "≥ 0" : "> 0") + ", found " + ((ScalarNode) v).text());
      return null;
    }
    return micros;
  }

  private Integer precision(Field f) {
    Node v = f.value();
    if (!(v instanceof ScalarNode s) || !s.isInteger()) {
      error(v.location(), "precision must be a whole number from 1 to 1000, found " + v.describe());
      return null;
    }
    if (!decimal(s, "precision")) {
      return null;
    }
    if (s.number().compareTo(BigDecimal.ONE) < 0 || s.number().compareTo(BigDecimal.valueOf(1000)) > 0) {
      error(v.location(), "precision must be from 1 to 1000, found " + s.text());
      return null;
    }
    return s.number().intValueExact();
  }

  /**
   * Whether an integer is written in plain decimal. YAML 1.1 reads {@code 020} as octal 16 and
   * {@code 0x10} as hexadecimal: a limit written that way is almost surely a mistake.
   */
  private boolean decimal(ScalarNode s, String what) {
    if (PLAIN_INTEGER.matcher(s.text()).matches()) {
      return true;
    }
    error(s.location(), what + " must be written in decimal digits, found " + s.text() + " (YAML would read it as "
        + s.number().toPlainString() + ")");
    return false;
  }

  private Boolean bool(Field f) {
    if (f.value() instanceof ScalarNode s && s.isBoolean()) {
      return s.isTrue();
    }
    error(f.value().location(), f.name() + " must be true or false, found " + f.value().describe());
    return null;
  }

  private String string(Field f, String what) {
    if (f.value() instanceof ScalarNode s && s.isString()) {
      return s.text();
    }
    String hint = f.value() instanceof ScalarNode s && !s.isNull() ? " (quote it: \"" + s.text() + "\")" : "";
    error(f.value().location(), what + " must be a string, found " + f.value().describe() + hint);
    return null;
  }

  private <E> E parseEnum(Field f, String text, E[] values, java.util.function.Function<E, String> name) {
    for (E e : values) {
      if (name.apply(e).equals(text)) {
        return e;
      }
    }
    error(f.value().location(), "unknown " + f.name() + " '" + text + "' (expected one of: "
        + Arrays.stream(values).map(name).collect(Collectors.joining(", ")) + ")");
    return null;
  }

  private void overrides(Field f, Algorithm algorithm, List<KeyOverride> out, List<List<ConfigLocation>> windowsAt,
      List<List<ConfigLocation>> patternsAt) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "overrides must be a list of {keys, config}, found " + f.value().describe());
      return;
    }
    for (Node n : list.items()) {
      if (!(n instanceof MapNode m)) {
        error(n.location(), "an override must be a mapping with 'keys' and 'config', found " + n.describe());
        continue;
      }
      checkFields(m, OVERRIDE_FIELDS);
      List<String> keys = null;
      List<ConfigLocation> keysAt = new ArrayList<>();
      Field kf = m.field("keys");
      if (kf == null) {
        missing(m, "keys", OVERRIDE_FIELDS, "override has no 'keys' (a list of keys or prefixes ending in '*')");
      } else {
        keys = patterns(kf, keysAt);
      }
      List<Window> windows = null;
      List<ConfigLocation> at = new ArrayList<>();
      Field cf = m.field("config");
      if (cf == null) {
        missing(m, "config", OVERRIDE_FIELDS, "override has no 'config' (its list of windows)");
      } else {
        windows = windows(cf, algorithm, at);
      }
      if (keys != null && windows != null) {
        out.add(new KeyOverride(keys, windows));
        windowsAt.add(at);
        patternsAt.add(keysAt);
      }
    }
  }

  private List<String> patterns(Field f, List<ConfigLocation> at) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "keys must be a list of keys or prefixes ending in '*', found " + f.value().describe());
      return null;
    }
    if (list.items().isEmpty()) {
      error(list.location(), "keys must list at least one key or prefix");
      return null;
    }
    List<String> out = new ArrayList<>();
    boolean ok = true;
    for (Node n : list.items()) {
      if (!(n instanceof ScalarNode s) || !s.isString()) {
        String hint = n instanceof ScalarNode s && !s.isNull() ? " (quote it: \"" + s.text() + "\")" : "";
        error(n.location(), "a key pattern must be a string, found " + n.describe() + hint);
        ok = false;
        continue;
      }
      String p = s.text();
      String prefix = p.endsWith("*") ? p.substring(0, p.length() - 1) : p;
      if (prefix.isEmpty()) {
        error(n.location(), "key pattern '" + p + "' matches " + (p.isEmpty() ? "nothing" : "every key")
            + "; give a key or a prefix followed by '*' (user:*)");
        ok = false;
      } else if (prefix.contains("*")) {
        error(n.location(), "key pattern '" + p + "' has a '*' before its end; a pattern is a key, or a prefix followed by "
            + "one '*' at the end");
        ok = false;
      } else {
        out.add(p);
        at.add(n.location());
      }
    }
    return ok ? out : null;
  }
}
