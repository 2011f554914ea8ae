package dev.sluice.server.cli;

import dev.sluice.Decision;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.util.List;

/**
 * Writes a decision as one line of JSON, by hand: replay writes a line per request and a
 * general-purpose serializer would dominate its time.
 */
final class DecisionJson {
  private DecisionJson() {}

  /**
   * Appends {@code {"t":..,"allowed":..,"retryAfterMs":..,"waitMs":..,"items":[{"rule","key",
   * "cost","windows":[{"limit","periodMs","remaining","retryAfterMs","resetAfterMs","exceeded"}]}]}}.
   */
  static void append(StringBuilder sb, long t, Decision d) {
    sb.append("{\"t\":").append(t)
        .append(",\"allowed\":").append(d.allowed())
        .append(",\"retryAfterMs\":").append(d.retryAfterMs())
        .append(",\"waitMs\":").append(d.waitMs())
        .append(",\"items\":[");
    List<ItemDecision> items = d.items();
    for (int i = 0; i < items.size(); i++) {
      ItemDecision it = items.get(i);
      if (i > 0) {
        sb.append(',');
      }
      sb.append("{\"rule\":");
      string(sb, it.rule());
      sb.append(",\"key\":");
      string(sb, it.key());
      sb.append(",\"cost\":").append(it.cost()).append(",\"windows\":[");
      List<WindowState> ws = it.windows();
      for (int j = 0; j < ws.size(); j++) {
        WindowState w = ws.get(j);
        if (j > 0) {
          sb.append(',');
        }
        sb.append("{\"limit\":").append(w.limit())
            .append(",\"periodMs\":").append(w.periodMs())
            .append(",\"remaining\":").append(w.remaining())
            .append(",\"retryAfterMs\":").append(w.retryAfterMs())
            .append(",\"resetAfterMs\":").append(w.resetAfterMs())
            .append(",\"exceeded\":").append(w.exceeded())
            .append('}');
      }
      sb.append("]}");
    }
    sb.append("]}");
  }

  /** Appends {@code s} as a JSON string. */
  static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c == '\u2028' || c == '\u2029') {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
