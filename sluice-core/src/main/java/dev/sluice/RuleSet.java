package dev.sluice;

import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * An immutable set of rules by name, in the order given, with the {@linkplain Operation
 * operations} over them and the typed {@linkplain Attribute attributes} those read. Rules and
 * operations are replaced together ({@link RateLimiter#updateRules}), so an operation never names
 * a rule that is not in force. Beside them: the named {@linkplain #tier tiers} that live limits
 * refer to, and the configured access lists ({@link ListKind}) of each rule.
 */
public final class RuleSet {
  private static final RuleSet EMPTY = new RuleSet(Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of());

  /** Tier names: as attribute names. */
  private static final Pattern TIER_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  /** Whether {@code name} can name a tier: 1 to 64 letters, digits, {@code _ . -}. */
  public static boolean isTierName(String name) {
    return TIER_NAME.matcher(name).matches();
  }

  /** Most tiers a set may name. */
  public static final int MAX_TIERS = 1000;
  /** Most entries one configured access list may hold. */
  public static final int MAX_LIST_ENTRIES = 10_000;
  /** Most rules a set may hold. */
  public static final int MAX_RULES = 100_000;
  /** Most operations a set may hold. */
  public static final int MAX_OPERATIONS = 100_000;
  /** Most typed attributes a set may declare. */
  public static final int MAX_ATTRIBUTES = 10_000;
  /**
   * Most entries the configured access lists of all rules hold together, of each kind: one list
   * is bounded by {@link #MAX_LIST_ENTRIES}, and without this many rules could hold 10,000 each.
   */
  public static final int MAX_LIST_ENTRIES_TOTAL = 1_000_000;

  private final Map<String, Rule> byName;
  private final Map<String, Operation> operations;
  private final Map<String, Attribute> attributes;
  /** The attributes whose values are not used as given. */
  private final Attribute[] typed;
  /** Each operation read against {@link #typed}, by name. */
  private final Map<String, CompiledOperation> compiled;
  private final Map<String, List<Window>> tiers;
  private final Map<String, List<String>> allow;
  private final Map<String, List<String>> deny;

  private RuleSet(Map<String, Rule> byName, Map<String, Operation> operations, Map<String, Attribute> attributes,
      Map<String, List<Window>> tiers, Map<String, List<String>> allow, Map<String, List<String>> deny) {
    this.byName = byName;
    this.operations = operations;
    this.attributes = attributes;
    this.tiers = tiers;
    this.allow = allow;
    this.deny = deny;
    this.typed = attributes.values().stream().filter(a -> a.type() != Attribute.Type.STRING).toArray(Attribute[]::new);
    Map<String, CompiledOperation> c = new HashMap<>();
    operations.forEach((name, op) -> c.put(name, new CompiledOperation(op, typed)));
    this.compiled = c;
  }

  public static RuleSet empty() {
    return EMPTY;
  }

  public static RuleSet of(Rule... rules) {
    return of(List.of(rules));
  }

  /** @throws IllegalArgumentException if two rules share a name, or there are more than {@link #MAX_RULES} */
  public static RuleSet of(Collection<Rule> rules) {
    if (rules.size() > MAX_RULES) {
      throw new IllegalArgumentException("at most " + MAX_RULES + " rules, had " + rules.size());
    }
    Map<String, Rule> m = new LinkedHashMap<>();
    for (Rule r : rules) {
      if (m.putIfAbsent(r.name(), r) != null) {
        throw new IllegalArgumentException("duplicate rule name '" + r.name() + "'");
      }
    }
    return new RuleSet(Collections.unmodifiableMap(m), Map.of(), Map.of(), Map.of(), Map.of(), Map.of());
  }

  /**
   * These rules with {@code operations} and typed {@code attributes} (replacing any this set
   * has).
   *
   * @throws IllegalArgumentException if two operations or two attributes share a name, an
   *     operation's item names a rule that is not in this set, or there are more than {@link
   *     #MAX_OPERATIONS} operations or {@link #MAX_ATTRIBUTES} attributes
   */
  public RuleSet withOperations(Collection<Operation> operations, Collection<Attribute> attributes) {
    if (operations.size() > MAX_OPERATIONS) {
      throw new IllegalArgumentException("at most " + MAX_OPERATIONS + " operations, had " + operations.size());
    }
    if (attributes.size() > MAX_ATTRIBUTES) {
      throw new IllegalArgumentException("at most " + MAX_ATTRIBUTES + " attributes, had " + attributes.size());
    }
    Map<String, Operation> ops = new LinkedHashMap<>();
    for (Operation op : operations) {
      if (ops.putIfAbsent(op.name(), op) != null) {
        throw new IllegalArgumentException("duplicate operation name '" + op.name() + "'");
      }
      for (OperationItem it : op.items()) {
        if (!byName.containsKey(it.rule())) {
          throw new IllegalArgumentException("operation '" + op.name() + "' names rule '" + it.rule()
              + "', which is not in the set");
        }
      }
    }
    Map<String, Attribute> attrs = new LinkedHashMap<>();
    for (Attribute a : attributes) {
      if (attrs.putIfAbsent(a.name(), a) != null) {
        throw new IllegalArgumentException("duplicate attribute '" + a.name() + "'");
      }
    }
    return new RuleSet(byName, Collections.unmodifiableMap(ops), Collections.unmodifiableMap(attrs), tiers, allow,
        deny);
  }

  /**
   * These rules with the named {@code tiers} (replacing any this set has), in the order given.
   *
   * @throws IllegalArgumentException if a name is not 1-64 letters, digits, {@code _ . -}, a
   *     tier has no window or more than {@link LiveLimit#MAX_WINDOWS}, or there are more than
   *     {@link #MAX_TIERS}
   */
  public RuleSet withTiers(Map<String, List<Window>> tiers) {
    if (tiers.size() > MAX_TIERS) {
      throw new IllegalArgumentException("at most " + MAX_TIERS + " tiers, had " + tiers.size());
    }
    Map<String, List<Window>> m = new LinkedHashMap<>();
    tiers.forEach((name, ws) -> {
      if (!TIER_NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("tier name must be 1-64 letters, digits, _ . -, was '" + name + "'");
      }
      if (ws.isEmpty() || ws.size() > LiveLimit.MAX_WINDOWS) {
        throw new IllegalArgumentException("tier '" + name + "' needs 1 to " + LiveLimit.MAX_WINDOWS
            + " windows, had " + ws.size());
      }
      m.put(name, List.copyOf(ws));
    });
    return new RuleSet(byName, operations, attributes, Collections.unmodifiableMap(m), allow, deny);
  }

  /**
   * These rules with the configured {@code kind} lists: entries by rule name (replacing any this
   * set has). Entries are checked where they are used, by the limiter (see {@link ListKind}).
   *
   * @throws IllegalArgumentException if a list names a rule not in this set or holds more than
   *     {@link #MAX_LIST_ENTRIES} entries, or the lists more than {@link #MAX_LIST_ENTRIES_TOTAL}
   *     together
   */
  public RuleSet withList(ListKind kind, Map<String, List<String>> entries) {
    long total = 0;
    for (List<String> es : entries.values()) {
      total += es.size();
    }
    if (total > MAX_LIST_ENTRIES_TOTAL) {
      throw new IllegalArgumentException(kind.wireName() + " lists hold " + total + " entries together, more than "
          + MAX_LIST_ENTRIES_TOTAL);
    }
    Map<String, List<String>> m = new LinkedHashMap<>();
    entries.forEach((rule, es) -> {
      if (!byName.containsKey(rule)) {
        throw new IllegalArgumentException(kind.wireName() + " list names rule '" + rule + "', which is not in the set");
      }
      if (es.size() > MAX_LIST_ENTRIES) {
        throw new IllegalArgumentException(kind.wireName() + " list of rule '" + rule + "' has " + es.size()
            + " entries, more than " + MAX_LIST_ENTRIES);
      }
      if (!es.isEmpty()) {
        m.put(rule, List.copyOf(es));
      }
    });
    Map<String, List<String>> lists = Collections.unmodifiableMap(m);
    return kind == ListKind.ALLOW
        ? new RuleSet(byName, operations, attributes, tiers, lists, deny)
        : new RuleSet(byName, operations, attributes, tiers, allow, lists);
  }

  /** The windows of the tier named {@code name}, or null. */
  public List<Window> tier(String name) {
    return tiers.get(name);
  }

  /** The named tiers, in order. */
  public Map<String, List<Window>> tiers() {
    return tiers;
  }

  /** The configured {@code kind} list of each rule that has one. */
  public Map<String, List<String>> lists(ListKind kind) {
    return kind == ListKind.ALLOW ? allow : deny;
  }

  /** The rule named {@code name}, or null. */
  public Rule get(String name) {
    return byName.get(name);
  }

  public Collection<Rule> rules() {
    return byName.values();
  }

  public int size() {
    return byName.size();
  }

  /** The operation named {@code name}, or null. */
  public Operation operation(String name) {
    return operations.get(name);
  }

  public Collection<Operation> operations() {
    return operations.values();
  }

  /** The declared attribute named {@code name}, or null (an undeclared attribute is a string). */
  public Attribute attribute(String name) {
    return attributes.get(name);
  }

  public Collection<Attribute> attributes() {
    return attributes.values();
  }

  /**
   * The request {@code request} stands for under these operations: the items of its operation
   * that apply to its attributes, in the operation's order, each key made from its template and
   * each cost multiplied by the request's; at the request's time.
   *
   * @throws UnknownOperationException if no operation has the request's name
   * @throws InvalidAttributeException if a typed attribute's value is not of its type (every
   *     typed attribute given is checked, used by the operation or not)
   * @throws MissingAttributeException if an item that applies names an attribute the request
   *     lacks, or no item applies
   * @throws InvalidCostException if an item's cost times the request's exceeds {@link Long#MAX_VALUE}
   */
  public Request resolve(OperationRequest request) {
    CompiledOperation op = compiled.get(request.operation());
    if (op == null) {
      throw new UnknownOperationException(request.operation());
    }
    return op.resolve(request);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RuleSet r && r.byName.equals(byName) && r.operations.equals(operations)
        && r.attributes.equals(attributes) && r.tiers.equals(tiers) && r.allow.equals(allow) && r.deny.equals(deny);
  }

  @Override
  public int hashCode() {
    return byName.hashCode() * 31 + operations.hashCode();
  }

  @Override
  public String toString() {
    return "RuleSet" + byName.values() + (operations.isEmpty() ? "" : operations.values());
  }
}
