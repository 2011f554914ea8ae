package dev.sluice;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A named mapping from request attributes to the items of one transaction. An
 * {@link OperationRequest} names the operation and gives the attributes; the limiter turns it
 * into a {@link Request} of the items that apply ({@link RuleSet#resolve}), decided all or nothing
 * like any other request.
 *
 * <pre>{@code
 * Operation.of("auth.createToken",
 *     OperationItem.of("per_user", "user:{user}").when("user"),
 *     OperationItem.of("anonymous", "ip:{ip}").unless("user"),
 *     OperationItem.of("per_ip", "ip:{ip}"),
 *     OperationItem.of("global", "all"));
 * }</pre>
 */
public final class Operation {
  /** The most items an operation may have: the HTTP API's bound on a request's items. */
  public static final int MAX_ITEMS = 100;
  /**
   * The most distinct {@code when}/{@code unless} attributes whose combinations are checked for
   * one that leaves every item out; beyond it the check is left to request time.
   */
  private static final int MAX_CHECKED_CONDITIONS = 16;
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:/-]{1,128}");

  private final String name;
  private final List<OperationItem> items;

  /**
   * @throws IllegalArgumentException if the name is not 1-128 letters, digits and {@code _ . : /
   *     -}, there are no items or more than {@link #MAX_ITEMS}, or some combination of present and
   *     absent attributes leaves every item out (every item has a {@code when} or an {@code unless}
   *     and none applies): such a request would be limited by nothing
   */
  public Operation(String name, List<OperationItem> items) {
    Objects.requireNonNull(name, "name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("operation name must be 1-128 characters of letters, digits and _ . : / -, "
          + "was '" + Attribute.clip(name) + "'");
    }
    this.name = name;
    this.items = List.copyOf(items);
    if (this.items.isEmpty()) {
      throw new IllegalArgumentException("operation '" + name + "' needs at least one item");
    }
    if (this.items.size() > MAX_ITEMS) {
      throw new IllegalArgumentException("operation '" + name + "' has " + this.items.size() + " items; the maximum is "
          + MAX_ITEMS);
    }
    String gap = uncovered();
    if (gap != null) {
      throw new IllegalArgumentException("operation '" + name + "' leaves out every item when " + gap
          + ": such a request would be limited by nothing; add an item without when or unless");
    }
  }

  public static Operation of(String name, OperationItem... items) {
    return new Operation(name, List.of(items));
  }

  /**
   * A combination of attributes present and absent for which no item applies, in words; null if
   * there is none (or too many conditions to try them all).
   */
  private String uncovered() {
    LinkedHashSet<String> conds = new LinkedHashSet<>();
    for (OperationItem it : items) {
      if (it.when() == null && it.unless() == null) {
        return null;
      }
      if (it.when() != null) {
        conds.add(it.when());
      }
      if (it.unless() != null) {
        conds.add(it.unless());
      }
    }
    if (conds.size() > MAX_CHECKED_CONDITIONS) {
      return null;
    }
    List<String> names = new ArrayList<>(conds);
    for (int mask = 0; mask < 1 << names.size(); mask++) {
      Map<String, String> present = new HashMap<>();
      for (int b = 0; b < names.size(); b++) {
        if ((mask & 1 << b) != 0) {
          present.put(names.get(b), "");
        }
      }
      boolean any = false;
      for (OperationItem it : items) {
        any |= it.applies(present);
      }
      if (!any) {
        List<String> words = new ArrayList<>();
        for (int b = 0; b < names.size(); b++) {
          words.add(names.get(b) + ((mask & 1 << b) != 0 ? " is present" : " is absent"));
        }
        return String.join(" and ", words);
      }
    }
    return null;
  }

  public String name() {
    return name;
  }

  public List<OperationItem> items() {
    return items;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Operation op && op.name.equals(name) && op.items.equals(items);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, items);
  }

  @Override
  public String toString() {
    return "Operation{" + name + " " + items + "}";
  }
}
