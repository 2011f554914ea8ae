package dev.sluice.client;

import dev.sluice.Algorithm;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.time.Duration;
import java.util.List;

/** Rules written as a native configuration file, so that a test puts them in force on a service. */
final class RulesYaml {
  private RulesYaml() {}

  static String of(RuleSet rules) {
    StringBuilder out = new StringBuilder("limits:\n");
    for (Rule r : rules.rules()) {
      out.append("  - name: ").append(quoted(r.name())).append('\n');
      out.append("    algorithm: ").append(r.algorithm().configName()).append('\n');
      if (r.algorithm() == Algorithm.SLIDING_WINDOW) {
        out.append("    precision: ").append(r.precision()).append('\n');
      }
      if (r.algorithm() == Algorithm.LEAKY_BUCKET && r.hasExplicitMaxWait()) {
        out.append("    max_wait: ").append(duration(r.maxWait())).append('\n');
      }
      if (r.shadow()) {
        out.append("    shadow: true\n");
      }
      out.append("    failure_mode: ").append(r.failureMode().configName()).append('\n');
      windows(out, "    ", r.windows());
      if (!r.overrides().isEmpty()) {
        out.append("    overrides:\n");
        for (KeyOverride o : r.overrides()) {
          out.append("      - keys: [");
          for (int i = 0; i < o.keys().size(); i++) {
            out.append(i > 0 ? ", " : "").append(quoted(o.keys().get(i)));
          }
          out.append("]\n");
          windows(out, "        ", o.windows());
        }
      }
    }
    return out.toString();
  }

  private static void windows(StringBuilder out, String indent, List<Window> ws) {
    out.append(indent).append("config:\n");
    for (Window w : ws) {
      out.append(indent).append("  - limit: ").append(w.limit()).append('\n');
      out.append(indent).append("    period: ").append(duration(w.period())).append('\n');
    }
  }

  private static String duration(Duration d) {
    if (d.toNanos() % 1_000_000 != 0) {
      throw new IllegalArgumentException("a period in whole milliseconds, was " + d);
    }
    return d.toMillis() + "ms";
  }

  /** A YAML double-quoted string (JSON's escapes). */
  private static String quoted(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
