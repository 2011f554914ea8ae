package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A decision as JSON, in the one shape of SPEC §7 that {@code sluice replay} prints and the HTTP
 * API answers: {@code {"allowed","retryAfterMs","waitMs","items":[{"rule","key","cost","windows":
 * [{"limit","periodMs","remaining","retryAfterMs","resetAfterMs","exceeded"}]}]}}. A
 * {@code retryAfterMs} of -1 means the cost can never fit. Written by hand: replay writes a line
 * per request and a general-purpose serializer would dominate its time.
 */
public final class DecisionJson {
  private DecisionJson() {}

  /**
   * Appends a replay line: the decision with {@code "t"} first. Replay leaves out the service's
   * extra fields, so that its output depends on the rules and the trace alone.
   */
  public static void appendReplayLine(StringBuilder sb, long t, Decision d) {
    sb.append("{\"t\":").append(t).append(',');
    appendFields(sb, d, false);
  }

  /**
   * The body of an HTTP answer: the decision plus {@code "degraded": true} when the store failed,
   * and per item {@code "reason"} when it was denied and {@code "shadow": true} for a shadow rule.
   */
  public static byte[] httpBody(Decision d) {
    StringBuilder sb = new StringBuilder(256).append('{');
    appendFields(sb, d, true);
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void appendFields(StringBuilder sb, Decision d, boolean explained) {
    sb.append("\"allowed\":").append(d.allowed())
        .append(",\"retryAfterMs\":").append(d.retryAfterMs())
        .append(",\"waitMs\":").append(d.waitMs());
    if (explained && d.degraded()) {
      sb.append(",\"degraded\":true");
    }
    sb.append(",\"items\":[");
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
      sb.append(",\"cost\":").append(it.cost());
      if (explained && it.reason() != DenyReason.NONE) {
        sb.append(",\"reason\":");
        string(sb, it.reason().wireName());
      }
      if (explained && it.shadow()) {
        sb.append(",\"shadow\":true");
      }
      sb.append(",\"windows\":[");
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
  public static void string(StringBuilder sb, String s) {
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
