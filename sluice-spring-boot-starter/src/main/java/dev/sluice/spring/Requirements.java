package dev.sluice.spring;

import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.RuleSet;
import dev.sluice.config.envoy.EnvoyDomain;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * What the application's routes and annotated methods need of the rules: an operation with the
 * attributes they map, a rule, or an Envoy domain with a limit for each descriptor. Checked at
 * start-up, where a problem stops the application, and against every reloaded configuration,
 * which is rejected if it would leave one of them without what it needs.
 */
public final class Requirements {
  /** One use of the rules: where it is written, and what it needs. */
  public interface Use {
    /** Adds what {@code rules} lacks for this use to {@code problems}. */
    void check(RuleSet rules, List<String> problems);

    /** Adds what {@code rules} and the Envoy {@code domains} lack for this use to {@code problems}. */
    default void check(RuleSet rules, Map<String, EnvoyDomain> domains, List<String> problems) {
      check(rules, problems);
    }
  }

  private final List<Use> uses = new CopyOnWriteArrayList<>();

  /**
   * Adds {@code use}, first checking it against {@code rules}.
   *
   * @throws SluiceConfigurationException if the rules lack what it needs
   */
  public void add(Use use, RuleSet rules) {
    add(use, rules, Map.of());
  }

  /**
   * Adds {@code use}, first checking it against {@code rules} and the Envoy {@code domains}.
   *
   * @throws SluiceConfigurationException if they lack what it needs
   */
  public void add(Use use, RuleSet rules, Map<String, EnvoyDomain> domains) {
    List<String> problems = new ArrayList<>();
    use.check(rules, domains, problems);
    if (!problems.isEmpty()) {
      throw new SluiceConfigurationException(String.join("\n", problems),
          "Define the operation or rule in sluice.rules or sluice.config, or correct the name; map every "
              + "attribute the operation reads; for an Envoy domain, name one of sluice.config's files and "
              + "give descriptors whose entry keys, in order, are those of a limited descriptor of it.");
    }
    uses.add(use);
  }

  /** What {@code rules} and {@code domains} lack for the uses known so far; empty when they all resolve. */
  List<String> problems(RuleSet rules, Map<String, EnvoyDomain> domains) {
    List<String> problems = new ArrayList<>();
    for (Use u : uses) {
      u.check(rules, domains, problems);
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

  /**
   * {@code where} decides Envoy domain {@code domain} with descriptors of these entry keys; per
   * descriptor and entry, its value when it is a constant, or null when each request brings its
   * own. Each descriptor must be able to meet a limit of the domain: one that never could would
   * leave the route unlimited without a word.
   */
  public static Use envoy(String where, String domain, List<List<String>> keys, List<List<String>> values) {
    return new Use() {
      @Override
      public void check(RuleSet rules, List<String> problems) {
        check(rules, Map.of(), problems);
      }

      @Override
      public void check(RuleSet rules, Map<String, EnvoyDomain> domains, List<String> problems) {
        EnvoyDomain d = domains.get(domain);
        if (d == null) {
          problems.add(where + ".domain names Envoy domain '" + domain + "', which is not defined; " + known(
              "Envoy domains", List.copyOf(domains.keySet())).replace("(sluice.rules, sluice.config)", "(sluice.config)"));
          return;
        }
        for (int i = 0; i < keys.size(); i++) {
          if (!d.mayMatch(keys.get(i), values.get(i))) {
            List<String> entries = new ArrayList<>();
            for (int j = 0; j < keys.get(i).size(); j++) {
              String v = values.get(i).get(j);
              entries.add(keys.get(i).get(j) + (v == null ? "" : ":" + v));
            }
            problems.add(where + ".descriptors[" + i + "] (" + String.join("/", entries) + ") matches no rate limit "
                + "of domain '" + domain + "' (" + d.file() + "); " + known("limited descriptors",
                d.limitedDescriptors()));
          }
        }
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
