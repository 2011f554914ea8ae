package dev.sluice.spring.annotation;

import dev.sluice.Operation;
import dev.sluice.OperationRequest;
import dev.sluice.RuleSet;
import dev.sluice.spring.Requirements;
import dev.sluice.spring.SluiceConfigurationException;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/** One {@link RateLimited} method, checked and its expressions parsed: what each call decides. */
final class Plan {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

  private final Method method;
  private final String operation;
  private final String rule;
  private final Expression key;
  private final Map<String, Expression> attributes;
  private final long cost;

  private Plan(Method method, String operation, String rule, Expression key, Map<String, Expression> attributes,
      long cost) {
    this.method = method;
    this.operation = operation;
    this.rule = rule;
    this.key = key;
    this.attributes = attributes;
    this.cost = cost;
  }

  static String where(Method m) {
    return "@RateLimited on " + m.getDeclaringClass().getName() + "." + m.getName() + "()";
  }

  /**
   * Checks {@code a} on {@code m} against {@code rules} and records what it needs in
   * {@code requirements}.
   *
   * @throws SluiceConfigurationException naming the method and what is wrong
   */
  static Plan of(Method m, RateLimited a, RuleSet rules, Requirements requirements) {
    String where = where(m);
    boolean op = !a.operation().isBlank();
    boolean rl = !a.rule().isBlank();
    if (op == rl) {
      throw new SluiceConfigurationException(where + " names " + (op ? "both an operation and a rule" : "neither an "
          + "operation nor a rule"), "Give operation = \"...\" or rule = \"...\", not both.");
    }
    if (a.cost() < 0) {
      throw new SluiceConfigurationException(where + " has cost " + a.cost(), "Give a cost of 0 or more.");
    }
    if (rl) {
      if (a.key().isBlank() || a.attributes().length > 0) {
        throw new SluiceConfigurationException(where + " decides rule '" + a.rule() + "' and needs a key "
            + "expression, without attributes", "Give key = \"#argument\" (attributes belong to operations).");
      }
      Expression key = parse(a.key(), where + " key");
      requirements.add(Requirements.rule(where, a.rule()), rules);
      return new Plan(m, null, a.rule(), key, Map.of(), a.cost());
    }
    Map<String, Expression> attributes = new LinkedHashMap<>();
    for (String pair : a.attributes()) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new SluiceConfigurationException(where + " has attribute '" + pair + "', not name=expression",
            "Write each attribute as name=expression, e.g. user=#user.id.");
      }
      String name = pair.substring(0, eq).trim();
      attributes.put(name, parse(pair.substring(eq + 1).trim(), where + " attribute '" + name + "'"));
    }
    if (!a.key().isBlank()) {
      Operation operation = rules.operation(a.operation());
      Set<String> read = operation == null ? Set.of() : Requirements.attributesOf(operation);
      if (operation != null && (read.size() != 1 || attributes.containsKey(read.iterator().next()))) {
        throw new SluiceConfigurationException(where + " gives a key, but operation '" + a.operation() + "' reads "
            + (read.isEmpty() ? "no attributes" : "attributes " + read) + ", not exactly one left unmapped",
            "Give the operation's attributes as attributes = {\"name=expression\", ...}.");
      }
      if (operation != null) {
        attributes.put(read.iterator().next(), parse(a.key(), where + " key"));
      }
    }
    requirements.add(Requirements.operation(where, a.operation(), attributes.keySet()), rules);
    return new Plan(m, a.operation(), null, null, Map.copyOf(attributes), a.cost());
  }

  private static Expression parse(String text, String where) {
    try {
      return PARSER.parseExpression(text);
    } catch (ParseException e) {
      throw new SluiceConfigurationException(where + " '" + text + "' does not parse: " + e.getMessage(),
          "Write a SpEL expression over the method's arguments, e.g. #user.id or #p0.");
    }
  }

  /** Whether the call decides an operation (else one rule and key). */
  boolean isOperation() {
    return operation != null;
  }

  String rule() {
    return rule;
  }

  long cost() {
    return cost;
  }

  /** The key of the rule for a call with {@code args}. */
  String key(Object[] args) {
    Object v = key.getValue(context(args));
    return v == null ? null : v.toString();
  }

  /** The operation request of a call with {@code args}; an attribute whose value is null is left out. */
  OperationRequest request(Object[] args) {
    EvaluationContext ctx = context(args);
    OperationRequest.Builder b = OperationRequest.builder(operation).cost(cost);
    for (Map.Entry<String, Expression> e : attributes.entrySet()) {
      Object v = e.getValue().getValue(ctx);
      if (v != null) {
        b.attribute(e.getKey(), v.toString());
      }
    }
    return b.build();
  }

  private EvaluationContext context(Object[] args) {
    return new MethodBasedEvaluationContext(null, method, args, NAMES);
  }
}
