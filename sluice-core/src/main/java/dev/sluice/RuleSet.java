package dev.sluice;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable set of rules by name, in the order given, with the {@linkplain Operation
 * operations} over them and the typed {@linkplain Attribute attributes} those read. Rules and
 * operations are replaced together ({@link RateLimiter#updateRules}), so an operation never names
 * a rule that is not in force.
 */
public final class RuleSet {
  private static final RuleSet EMPTY = new RuleSet(Map.of(), Map.of(), Map.of());

  private final Map<String, Rule> byName;
  private final Map<String, Operation> operations;
  private final Map<String, Attribute> attributes;
  /** The attributes whose values are not used as given. */
  private final Attribute[] typed;

  private RuleSet(Map<String, Rule> byName, Map<String, Operation> operations, Map<String, Attribute> attributes) {
    this.byName = byName;
    this.operations = operations;
    this.attributes = attributes;
    this.typed = attributes.values().stream().filter(a -> a.type() != Attribute.Type.STRING).toArray(Attribute[]::new);
  }

  public static RuleSet empty() {
    return EMPTY;
  }

  public static RuleSet of(Rule... rules) {
    return of(List.of(rules));
  }

  /** @throws IllegalArgumentException if two rules share a name */
  public static RuleSet of(Collection<Rule> rules) {
    Map<String, Rule> m = new LinkedHashMap<>();
    for (Rule r : rules) {
      if (m.putIfAbsent(r.name(), r) != null) {
        throw new IllegalArgumentException("duplicate rule name '" + r.name() + "'");
      }
    }
    return new RuleSet(Collections.unmodifiableMap(m), Map.of(), Map.of());
  }

  /**
   * These rules with {@code operations} and typed {@code attributes} (replacing any this set
   * has).
   *
   * @throws IllegalArgumentException if two operations or two attributes share a name, or an
   *     operation's item names a rule that is not in this set
   */
  public RuleSet withOperations(Collection<Operation> operations, Collection<Attribute> attributes) {
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
    return new RuleSet(byName, Collections.unmodifiableMap(ops), Collections.unmodifiableMap(attrs));
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
    Operation op = operations.get(request.operation());
    if (op == null) {
      throw new UnknownOperationException(request.operation());
    }
    Map<String, String> given = request.attributes();
    Map<String, String> text = given;
    for (Attribute a : typed) {
      String v = given.get(a.name());
      if (v != null) {
        if (text == given) {
          text = new HashMap<>(given);
        }
        text.put(a.name(), a.keyText(v));
      }
    }
    List<OperationItem> defined = op.items();
    List<Item> items = new ArrayList<>(defined.size());
    String[] missing = new String[1];
    for (OperationItem it : defined) {
      if (!it.applies(given)) {
        continue;
      }
      String key = it.expand(text, missing);
      if (key == null) {
        throw MissingAttributeException.forItem(op.name(), it.rule(), missing[0]);
      }
      long cost;
      try {
        cost = Math.multiplyExact(it.cost(), request.cost());
      } catch (ArithmeticException e) {
        throw new InvalidCostException(it.rule(), request.cost(), "cost " + request.cost() + " times the cost "
            + it.cost() + " of rule '" + it.rule() + "' in operation '" + op.name() + "' exceeds " + Long.MAX_VALUE);
      }
      items.add(new Item(it.rule(), key, cost));
    }
    if (items.isEmpty()) {
      String need = defined.get(0).when() != null ? defined.get(0).when() : defined.get(0).unless();
      throw new MissingAttributeException(op.name(), null, need, "operation '" + op.name()
          + "' has no item that applies to the attributes given");
    }
    return new Request(items, request.timeMicros());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RuleSet r && r.byName.equals(byName) && r.operations.equals(operations)
        && r.attributes.equals(attributes);
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
