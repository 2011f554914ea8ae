package dev.sluice.spring;

import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.RuleSet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * What the application's routes and annotated methods need of the rules: an operation with the
 * attributes they map, or a rule. Checked at start-up, where a problem stops the application,
 * and against every reloaded configuration, which is rejected if it would leave one of them
 * without its operation or rule.
 */
public final class Requirements {
  /** One use of the rules: where it is written, and what it needs. */
  public interface Use {
    /** Adds what {@code rules} lacks for this use to {@code problems}. */
    void check(RuleSet rules, List<String> problems);
  }

  private final List<Use> uses = new CopyOnWriteArrayList<>();

  /**
   * Adds {@code use}, first checking it against {@code rules}.
   *
   * @throws SluiceConfigurationException if the rules lack what it needs
   */
  public void add(Use use, RuleSet rules) {
    List<String> problems = new ArrayList<>();
    use.check(rules, problems);
    if (!problems.isEmpty()) {
      throw new SluiceConfigurationException(String.join("\n", problems),
          "Define the operation or rule in sluice.rules or sluice.config, or correct the name; map every "
              + "attribute the operation reads.");
    }
    uses.add(use);
  }

  /** What {@code rules} lacks for the uses known so far; empty when they all resolve. */
  List<String> problems(RuleSet rules) {
    List<String> problems = new ArrayList<>();
    for (Use u : uses) {
      u.check(rules, problems);
    }
    return problems;
  }

  /**
   * The attributes {@code op} reads: those of its key templates and of its {@code when} and
   * {@code unless} conditions. A use must map each one, though a request may lack the value
   * (an anonymous caller has no principal).
   */
  public static Set<String> attributesOf(Operation op) {
    Set<String> names = new LinkedHashSet<>();
    for (OperationItem it : op.items()) {
      names.addAll(it.placeholders());
      if (it.when() != null) {
        names.add(it.when());
      }
      if (it.unless() != null) {
        names.add(it.unless());
      }
    }
    return names;
  }

  /** {@code where} runs operation {@code name}, giving the attributes {@code mapped}. */
  public static Use operation(String where, String name, Set<String> mapped) {
    return (rules, problems) -> {
      Operation op = rules.operation(name);
      if (op == null) {
        problems.add(where + " names operation '" + name + "', which is not defined; " + known("operations",
            rules.operations().stream().map(Operation::name).toList()));
        return;
      }
      List<String> missing = attributesOf(op).stream().filter(a -> !mapped.contains(a)).toList();
      if (!missing.isEmpty()) {
        problems.add(where + " runs operation '" + name + "', which reads attribute" + (missing.size() == 1 ? " " : "s ")
            + missing.stream().map(a -> "'" + a + "'").collect(Collectors.joining(", "))
            + " that it does not map (it maps " + (mapped.isEmpty() ? "none" : String.join(", ", mapped)) + ")");
      }
    };
  }

  /** {@code where} decides rule {@code name} directly. */
  public static Use rule(String where, String name) {
    return (rules, problems) -> {
      if (rules.get(name) == null) {
        problems.add(where + " names rule '" + name + "', which is not defined; " + known("rules",
            rules.rules().stream().map(r -> r.name()).toList()));
      }
    };
  }

  private static String known(String what, List<String> names) {
    if (names.isEmpty()) {
      return "no " + what + " are defined (sluice.rules, sluice.config)";
    }
    List<String> sorted = names.stream().sorted(Comparator.naturalOrder()).limit(20).toList();
    return "the " + what + " are " + String.join(", ", sorted) + (names.size() > 20 ? ", ..." : "");
  }
}
