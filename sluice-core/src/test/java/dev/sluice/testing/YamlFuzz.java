package dev.sluice.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Hostile configuration text for the loaders: valid files mutated the way YAML goes wrong (lines
 * deleted, repeated, swapped or re-indented; scalars of another type, huge numbers and odd
 * durations; keys of another level; anchors, aliases and the "billion laughs"; deep nesting;
 * very long strings; unusual Unicode; tabs; directives, tags and documents), and random text
 * made of YAML's own characters.
 */
public final class YamlFuzz {
  /** Values of every type YAML knows, and the values at the edges of each field's range. */
  static final List<String> SCALARS = List.of("", "~", "null", "Null", "true", "false", "yes", "no", "on", "off",
      "0", "-0", "1", "-1", "2", "20", "1.5", "-1.5", "0.0000001", "1e3", "1E3", "1e999999999", "-1e999999999",
      "1e-999999999", "1e99999999999", "9e-99999999999", "9223372036854775807", "9223372036854775808",
      "-9223372036854775809", "4294967295", "4294967296", "1000000000000000", "1000000000000001", "2147483639",
      "2147483640", "10000000", "10000001", "99999999999999999999999999999999999999", "0x7fffffffffffffff",
      "0xffffffffffffffffffffffffff", "0o777", "0777", "08", "0b1010", "+12", "1_000", "1__0", "_1", "190:20:30",
      ".inf", "-.inf", ".nan", ".NaN", "2001-12-14t21:59:43.10-05:00", "2002-12-14", "\"60\"", "'1m'", "1m",
      "1m30s", "500ms", "0s", "-1s", "1us", "1µs", "0.5us", "3650d", "3651d", "99999999999999999999d",
      "1.0000001s", "PT1M", "PT-1M", "-PT1M", "P99999999999D", "PT0.0000001S", "pt1m", "P", "PT", "P1Y",
      "[]", "{}", "[1, 2]", "{a: 1}", "[limit: 1]", "!!str 5", "!!int x", "!!int 5", "!!float 1", "!!bool yes",
      "!!binary aGk=", "!!set {a}", "!!omap [a: 1]", "!!null x", "!foo bar", "!<tag:yaml.org,2002:str> 5",
      "!!python/object/apply:os.system [ls]", "|\n  block\n", ">-\n  folded\n", "|+", "\"\\u0000\"", "\"\\ud800\"",
      "\"\\udc00x\"", "\"\\U0001F600\"", "\"a\\tb\"", "\"\\x41\"", "\"\\e\"", "\"\\N\\_\\L\\P\"", "\"\u202Eevil\"",
      "\"\u200B\"", "ü", "名前", "😀", "e\u0301", "\uFEFF", "\u0085", "\u2028", "sliding_log", "sliding_window",
      "token_bucket", "leaky_bucket", "fixed_window", "SLIDING_LOG", "open", "closed", "local", "user:*", "*",
      "\"*\"", "'a*b*'", "\"**\"", "&x 5", "*x", "*undefined", "? complex", "- item", "@reserved", "`tick", "%",
      "'unterminated", "\"unterminated", "#comment", "a: b", "a:b", "- - -", "second", "minute", "hour", "day",
      "week", "month", "year", "SECOND", "api.call", "a b", "auth.createToken", "envoy:x/y", "a/b",
      "0.001", "0.0001", "0.000001", "3.5", "1.000000000000000000001");

  /** Values that fit some field of either format: most such changes keep the file valid. */
  static final List<String> FITTING = List.of("1", "5", "20", "100", "1000000", "1s", "1m", "60", "0.5", "500ms",
      "1h", "1d", "PT1M", "3s", "sliding_log", "sliding_window", "token_bucket", "fixed_window", "leaky_bucket",
      "open", "closed", "local", "true", "false", "second", "minute", "hour", "day", "user:*", "api.call", "10");

  /** Keys of every level of both formats, and keys YAML allows but no reader expects. */
  static final List<String> KEYS = List.of("limits", "name", "algorithm", "config", "precision", "max_wait",
      "overrides", "shadow", "failure_mode", "limit", "period", "keys", "domain", "descriptors", "key", "value",
      "rate_limit", "unit", "requests_per_unit", "unlimited", "replaces", "shadow_mode", "detailed_metric", "sluice",
      "windows", "<<", "? x", "\"quoted\"", "'single'", "[a, b]", "{a: 1}", "1", "null", "~", "true", "\"\"",
      "名前", "a b", "limt", "Limits", "-", "!!str limit", "&k limit", "*k", "? [a]\n:", "\"\\ud800\"");

  private static final String YAML_CHARS = " \t\n\r:-?[]{},#&*!|>'\"%@`\\.0123456789abcdeflmnoprstuxyzPTS_/+~=";

  private static final Pattern KEY_VALUE = Pattern.compile("^(\\s*(?:-\\s+)?)([^\\s:#][^:#]*?):(\\s+)(\\S.*)$");
  private static final Pattern KEY_ONLY = Pattern.compile("^(\\s*(?:-\\s+)?)([^\\s:#][^:#]*?):\\s*$");
  private static final Pattern LIST_ITEM = Pattern.compile("^(\\s*-\\s+)(\\S.*)$");

  private final List<String> seeds;

  /** Mutates the given valid files. */
  public YamlFuzz(List<String> seeds) {
    if (seeds.isEmpty()) {
      throw new IllegalArgumentException("no seed");
    }
    this.seeds = List.copyOf(seeds);
  }

  /** The text of every {@code *.yaml} file of {@code dir}. */
  public static List<String> seedsIn(Path dir) {
    try (var files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().map(p -> {
        try {
          return Files.readString(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A seed with one to six mutations. */
  public Arbitrary<String> mutated() {
    return Arbitraries.randomValue(r -> {
      String text = seeds.get(r.nextInt(seeds.size()));
      int n = r.nextInt(2) == 0 ? 1 : 1 + r.nextInt(r.nextInt(8) == 0 ? 6 : 3);
      for (int i = 0; i < n; i++) {
        text = mutate(text, r);
      }
      return text;
    });
  }

  /** Random text of YAML's indicators, digits, letters, whitespace and the odd Unicode character. */
  public static Arbitrary<String> randomText() {
    Arbitrary<String> yamlish = Arbitraries.randomValue(r -> {
      int n = r.nextInt(200);
      StringBuilder b = new StringBuilder(n);
      for (int i = 0; i < n; i++) {
        int k = r.nextInt(20);
        if (k == 0) {
          b.append(SCALARS.get(r.nextInt(SCALARS.size())));
        } else if (k == 1) {
          b.append(KEYS.get(r.nextInt(KEYS.size()))).append(": ");
        } else if (k == 2) {
          b.appendCodePoint(r.nextInt(0x30000));
        } else {
          b.append(YAML_CHARS.charAt(r.nextInt(YAML_CHARS.length())));
        }
      }
      return b.toString();
    });
    return Arbitraries.oneOf(yamlish, yamlish, Arbitraries.strings().ofMaxLength(100),
        Arbitraries.strings().all().ofMaxLength(100));
  }

  /** One mutation of {@code text}. */
  static String mutate(String text, Random r) {
    List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
    if (lines.isEmpty()) {
      lines.add("");
    }
    int i = r.nextInt(lines.size());
    int j = r.nextInt(lines.size());
    switch (r.nextInt(20)) {
      case 0 -> lines.remove(i);
      case 1 -> lines.add(i, lines.get(i));
      case 2 -> {
        String t = lines.get(i);
        lines.set(i, lines.get(j));
        lines.set(j, t);
      }
      case 3, 4, 5 -> lines.set(i, withValue(lines.get(i), SCALARS.get(r.nextInt(SCALARS.size()))));
      case 6 -> lines.set(i, withKey(lines.get(i), KEYS.get(r.nextInt(KEYS.size()))));
      case 7 -> lines.set(i, reindent(lines.get(i), r));
      case 8 -> {
        // An anchor on one value and an alias to it on another (or a merge key).
        lines.set(i, withValue(lines.get(i), "&a " + valueOf(lines.get(i), "1")));
        lines.set(j, withValue(lines.get(j), r.nextBoolean() ? "*a" : "*b"));
        if (r.nextInt(4) == 0) {
          lines.add(j, indentOf(lines.get(j)) + "<<: *a");
        }
      }
      case 9 -> lines.set(i, withValue(lines.get(i), nested(r)));
      case 10 -> {
        String l = lines.get(i);
        int at = l.isEmpty() ? 0 : r.nextInt(l.length() + 1);
        String ins = r.nextInt(3) == 0 ? new String(Character.toChars(r.nextInt(0x30000)))
            : String.valueOf(YAML_CHARS.charAt(r.nextInt(YAML_CHARS.length())));
        lines.set(i, l.substring(0, at) + ins + l.substring(at));
      }
      case 11 -> {
        String all = String.join("\n", lines);
        return all.substring(0, r.nextInt(all.length() + 1));
      }
      case 12 -> lines.set(i, withValue(lines.get(i), longString(r)));
      case 13 -> lines.add(i, List.of("---", "...", "%YAML 1.2", "%YAML 1.1\n---", "%TAG ! tag:x,2000:", "--- !!map",
          "# comment", "\t", "? key\n: value", "!!python/object:os.system", "&anchor", "[", "}", "\u0000",
          "\uFEFF", "---\n---").get(r.nextInt(16)));
      case 14 -> {
        // Billion laughs: each level refers to the one below ten times.
        StringBuilder b = new StringBuilder("lol0: &l0 \"lol\"\n");
        for (int k = 1; k <= 9; k++) {
          b.append("lol").append(k).append(": &l").append(k).append(" [");
          for (int m = 0; m < 10; m++) {
            b.append(m == 0 ? "" : ", ").append("*l").append(k - 1);
          }
          b.append("]\n");
        }
        lines.add(r.nextBoolean() ? 0 : i, b.toString().strip());
        if (r.nextBoolean()) {
          lines.set(j, withValue(lines.get(j), "*l9"));
        }
      }
      case 15 -> {
        // A block (a rule, a descriptor, a window) repeated or moved.
        int end = Math.min(lines.size(), i + 1 + r.nextInt(6));
        List<String> block = new ArrayList<>(lines.subList(i, end));
        lines.addAll(r.nextBoolean() ? end : j, block);
      }
      case 16 -> lines.set(i, lines.get(i).replace("  ", r.nextBoolean() ? "\t" : " \t"));
      default -> lines.set(i, withValue(lines.get(i), FITTING.get(r.nextInt(FITTING.size()))));
    }
    return String.join("\n", lines);
  }

  private static String nested(Random r) {
    int depth = r.nextInt(4) == 0 ? 500 + r.nextInt(20_000) : 1 + r.nextInt(200);
    StringBuilder b = new StringBuilder();
    switch (r.nextInt(3)) {
      case 0 -> b.append("[".repeat(depth)).append("1").append("]".repeat(depth));
      case 1 -> b.append("{a: ".repeat(depth)).append("1").append("}".repeat(depth));
      default -> {
        for (int k = 0; k < Math.min(depth, 2_000); k++) {
          b.append('\n').append(" ".repeat(k + 1)).append("- ");
        }
        b.append('1');
      }
    }
    return b.toString();
  }

  private static String longString(Random r) {
    int n = r.nextBoolean() ? 129 + r.nextInt(1_000) : 10_000 + r.nextInt(200_000);
    String unit = List.of("a", "€", "😀", "x ", "*", "a:").get(r.nextInt(6));
    String s = unit.repeat(Math.max(1, n / unit.length()));
    return r.nextBoolean() ? s : "\"" + s + "\"";
  }

  private static String reindent(String line, Random r) {
    String stripped = line.stripLeading();
    int indent = line.length() - stripped.length();
    return switch (r.nextInt(4)) {
      case 0 -> " ".repeat(indent + 1 + r.nextInt(4)) + stripped;
      case 1 -> " ".repeat(Math.max(0, indent - 1 - r.nextInt(4))) + stripped;
      case 2 -> "\t".repeat(1 + r.nextInt(2)) + stripped;
      default -> stripped;
    };
  }

  private static String withValue(String line, String value) {
    Matcher m = KEY_VALUE.matcher(line);
    if (m.matches()) {
      return m.group(1) + m.group(2) + ":" + m.group(3) + value;
    }
    m = KEY_ONLY.matcher(line);
    if (m.matches()) {
      return line + " " + value;
    }
    m = LIST_ITEM.matcher(line);
    if (m.matches()) {
      return m.group(1) + value;
    }
    return line + value;
  }

  private static String valueOf(String line, String otherwise) {
    Matcher m = KEY_VALUE.matcher(line);
    return m.matches() ? m.group(4) : otherwise;
  }

  private static String withKey(String line, String key) {
    Matcher m = KEY_VALUE.matcher(line);
    if (m.matches()) {
      return m.group(1) + key + ":" + m.group(3) + m.group(4);
    }
    m = KEY_ONLY.matcher(line);
    if (m.matches()) {
      return m.group(1) + key + ":";
    }
    return indentOf(line) + key + ": " + line.strip();
  }

  private static String indentOf(String line) {
    return line.substring(0, line.length() - line.stripLeading().length());
  }
}
