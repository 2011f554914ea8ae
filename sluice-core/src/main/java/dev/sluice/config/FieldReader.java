package dev.sluice.config;

import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What every part of the native reader shares: the problems of the file being read, and the
 * readers of a field's value by type (strings, booleans, whole numbers, durations, names from a
 * list), each recording an error that names the value and its place instead of throwing.
 */
abstract class FieldReader {
  /** Beyond this, arithmetic on limits (limit × interval) could overflow. */
  static final long MAX_LIMIT = 1_000_000_000_000_000L;
  /** The exact log keeps one entry per unit in an array. */
  static final long MAX_SLIDING_LOG_LIMIT = Integer.MAX_VALUE - 8;

  private static final Pattern PLAIN_INTEGER = Pattern.compile("[-+]?(0|[1-9][0-9_]*)");

  /** The problems of one file, shared by the readers of its parts. */
  static final class Problems {
    final String file;
    final List<ConfigProblem> errors = new ArrayList<>();
    final List<ConfigProblem> warnings = new ArrayList<>();
    /** Errors found, including those not listed because their place already has one. */
    int count;

    Problems(String file) {
      this.file = file;
    }
  }

  final Problems problems;

  FieldReader(Problems problems) {
    this.problems = problems;
  }

  /** Errors found so far: a part read with more than before it has errors of its own. */
  final int errorCount() {
    return problems.count;
  }

  void error(ConfigLocation at, String message) {
    problems.count++;
    // One error per place: a value already reported (an alias, say) must not be reported again
    // as the wrong type.
    for (ConfigProblem p : problems.errors) {
      if (p.line() == at.line() && p.column() == at.column() && at.line() > 0) {
        return;
      }
    }
    problems.errors.add(ConfigProblem.at(at, message));
  }

  void warn(ConfigLocation at, String message) {
    problems.warnings.add(ConfigProblem.at(at, message));
  }

  /** A whole number from {@code min} to {@code max}, or null after recording an error. */
  Long wholeNumber(Field f, String what, long min, long max) {
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

  void unknownField(Field f, List<String> expected) {
    error(f.at(), "unknown field '" + f.name() + "' (expected one of: " + String.join(", ", expected) + ")");
  }

  void checkFields(MapNode m, List<String> expected) {
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
  void missing(MapNode m, String field, List<String> expected, String message) {
    for (String name : m.fields().keySet()) {
      if (!expected.contains(name) && distance(name, field) <= 2) {
        problems.count++;
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

  /** A period (> 0) or a wait (≥ 0) in microseconds, or null after recording an error. */
  Long duration(Node v, String what, boolean zeroAllowed) {
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

  /**
   * Whether an integer is written in plain decimal. YAML 1.1 reads {@code 020} as octal 16 and
   * {@code 0x10} as hexadecimal: a limit written that way is almost surely a mistake.
   */
  boolean decimal(ScalarNode s, String what) {
    if (PLAIN_INTEGER.matcher(s.text()).matches()) {
      return true;
    }
    error(s.location(), what + " must be written in decimal digits, found " + s.text() + " (YAML would read it as "
        + s.number().toPlainString() + ")");
    return false;
  }

  Boolean bool(Field f) {
    if (f.value() instanceof ScalarNode s && s.isBoolean()) {
      return s.isTrue();
    }
    error(f.value().location(), f.name() + " must be true or false, found " + f.value().describe());
    return null;
  }

  String string(Field f, String what) {
    if (f.value() instanceof ScalarNode s && s.isString()) {
      return s.text();
    }
    String hint = f.value() instanceof ScalarNode s && !s.isNull() ? " (quote it: \"" + s.text() + "\")" : "";
    error(f.value().location(), what + " must be a string, found " + f.value().describe() + hint);
    return null;
  }

  <E> E parseEnum(Field f, String text, E[] values, java.util.function.Function<E, String> name) {
    for (E e : values) {
      if (name.apply(e).equals(text)) {
        return e;
      }
    }
    error(f.value().location(), "unknown " + f.name() + " '" + text + "' (expected one of: "
        + Arrays.stream(values).map(name).collect(Collectors.joining(", ")) + ")");
    return null;
  }
}
