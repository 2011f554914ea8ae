package dev.sluice;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * An {@link Operation} read once against the typed attributes of its {@link RuleSet}, so that
 * resolving a request ({@link #resolve}) is a few array reads rather than a reading of the
 * definition: every attribute the operation reads, in a condition or a key template, has a slot;
 * each slot's value is looked up in the request once (and, for a typed attribute, turned into its
 * key text once), and each key is then built in one allocation from literal text and slots.
 *
 * <p>Resolving is on the path of every request by operation, so this is where an operation's
 * cost over the same items sent directly is spent (docs/benchmarks.md §5).
 */
final class CompiledOperation {
  private final Operation operation;
  /** Slot to attribute name. */
  private final String[] names;
  /** The rule set's typed attributes, in its order: every one given is checked. */
  private final Attribute[] typed;
  /** For each of {@link #typed}, its slot, or -1 if the operation does not read it. */
  private final int[] typedSlot;
  private final Step[] steps;

  /**
   * One item: its conditions as slots (-1 for none), its key template as literal text between
   * slots ({@code literals.length == slots.length + 1}).
   */
  private record Step(OperationItem item, int when, int unless, String[] literals, int[] slots) {
    boolean applies(String[] values) {
      return (when < 0 || values[when] != null) && (unless < 0 || values[unless] == null);
    }

    /** The key, or null if a slot it names has no value. */
    String key(String[] values) {
      if (slots.length == 0) {
        return literals[0];
      }
      if (slots.length == 1) {
        String v = values[slots[0]];
        return v == null ? null : literals[0] + v + literals[1];
      }
      int length = literals[0].length();
      for (int i = 0; i < slots.length; i++) {
        String v = values[slots[i]];
        if (v == null) {
          return null;
        }
        length += v.length() + literals[i + 1].length();
      }
      StringBuilder sb = new StringBuilder(length).append(literals[0]);
      for (int i = 0; i < slots.length; i++) {
        sb.append(values[slots[i]]).append(literals[i + 1]);
      }
      return sb.toString();
    }

    int firstMissing(String[] values) {
      for (int s : slots) {
        if (values[s] == null) {
          return s;
        }
      }
      throw new IllegalStateException("no slot of the template is missing");
    }
  }

  CompiledOperation(Operation operation, Attribute[] typed) {
    this.operation = operation;
    this.typed = typed;
    List<String> slotNames = new ArrayList<>();
    List<OperationItem> items = operation.items();
    this.steps = new Step[items.size()];
    for (int i = 0; i < steps.length; i++) {
      OperationItem it = items.get(i);
      String[] parts = it.parts();
      String[] literals = new String[parts.length / 2 + 1];
      int[] slots = new int[parts.length / 2];
      for (int p = 0; p < parts.length; p++) {
        if ((p & 1) == 0) {
          literals[p / 2] = parts[p];
        } else {
          slots[p / 2] = slot(slotNames, parts[p]);
        }
      }
      int when = it.when() == null ? -1 : slot(slotNames, it.when());
      int unless = it.unless() == null ? -1 : slot(slotNames, it.unless());
      steps[i] = new Step(it, when, unless, literals, slots);
    }
    this.names = slotNames.toArray(new String[0]);
    this.typedSlot = new int[typed.length];
    for (int t = 0; t < typed.length; t++) {
      typedSlot[t] = slotNames.indexOf(typed[t].name());
    }
  }

  private static int slot(List<String> names, String name) {
    int at = names.indexOf(name);
    if (at >= 0) {
      return at;
    }
    // Interned, so that a name a Java caller wrote as a literal is found by identity.
    names.add(name.intern());
    return names.size() - 1;
  }


  /** As {@link RuleSet#resolve}, whose contract this keeps. */
  Request resolve(OperationRequest request) {
    Map<String, String> given = request.attributes();
    String[] values = new String[names.length];
    for (int s = 0; s < names.length; s++) {
      values[s] = given.get(names[s]);
    }
    for (int t = 0; t < typed.length; t++) {
      int s = typedSlot[t];
      String v = s >= 0 ? values[s] : given.get(typed[t].name());
      if (v != null) {
        String text = typed[t].keyText(v); // checks the value even where the operation does not read it
        if (s >= 0) {
          values[s] = text;
        }
      }
    }
    Item[] out = new Item[steps.length];
    int n = 0;
    for (Step step : steps) {
      if (!step.applies(values)) {
        continue;
      }
      OperationItem it = step.item;
      String key = step.key(values);
      if (key == null) {
        throw MissingAttributeException.forItem(operation.name(), it.rule(), names[step.firstMissing(values)]);
      }
      long cost;
      try {
        cost = Math.multiplyExact(it.cost(), request.cost());
      } catch (ArithmeticException e) {
        throw new InvalidCostException(it.rule(), request.cost(), "cost " + request.cost() + " times the cost "
            + it.cost() + " of rule '" + it.rule() + "' in operation '" + operation.name() + "' exceeds "
            + Long.MAX_VALUE);
      }
      out[n++] = new Item(it.rule(), key, cost);
    }
    if (n == 0) {
      OperationItem first = steps[0].item;
      String need = first.when() != null ? first.when() : first.unless();
      throw new MissingAttributeException(operation.name(), null, need, "operation '" + operation.name()
          + "' has no item that applies to the attributes given");
    }
    return new Request(List.of(n == out.length ? out : Arrays.copyOf(out, n)), request.timeMicros());
  }
}
