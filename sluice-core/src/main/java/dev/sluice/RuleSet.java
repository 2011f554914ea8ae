package dev.sluice;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** An immutable set of rules by name, in the order given. */
public final class RuleSet {
  private static final RuleSet EMPTY = new RuleSet(Map.of());

  private final Map<String, Rule> byName;

  private RuleSet(Map<String, Rule> byName) {
    this.byName = byName;
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
    return new RuleSet(Collections.unmodifiableMap(m));
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

  @Override
  public boolean equals(Object o) {
    return o instanceof RuleSet r && r.byName.equals(byName);
  }

  @Override
  public int hashCode() {
    return byName.hashCode();
  }

  @Override
  public String toString() {
    return "RuleSet" + byName.values();
  }
}
