package dev.sluice.server;

import com.linecorp.armeria.common.HttpData;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.util.Arrays;
import java.util.List;

/**
 * The hand-written writer the service used before {@link DecisionJson}, kept as the reference for
 * the exact bytes clients and replay consumers have always received.
 */
final class ReferenceDecisionJson {
  private static final String[] REASONS =
      Arrays.stream(DenyReason.values()).map(DenyReason::wireName).toArray(String[]::new);

  private ReferenceDecisionJson() {}

  /**
   * Appends a replay line: the decision with {@code "t"} first. Replay leaves out the service's
   * extra fields, so that its output depends on the rules and the trace alone.
   */
  static void appendReplayLine(StringBuilder sb, long t, Decision d) {
    sb.append("{\"t\":").append(t).append(',');
    appendFields(new Chars(sb), d, false);
  }

  /**
   * The body of an HTTP answer: the decision plus {@code "degraded": true} when the store failed,
   * and per item {@code "reason"} when it was denied, {@code "shadow": true} for a shadow rule and
   * {@code "leased": true} for an item answered from a lease.
   * Written straight into UTF-8 bytes.
   */
  static HttpData httpBody(Decision d) {
    Utf8 out = new Utf8(d);
    out.ascii("{");
    appendFields(out, d, true);
    return HttpData.wrap(out.buf, 0, out.len);
  }

  /** Where the fields go: the layout is written once, for characters and for bytes. */
  private interface Sink {
    /** Appends {@code s}, which is ASCII and needs no escaping. */
    void ascii(String s);

    void number(long v);

    /** Appends {@code s} as a JSON string. */
    void string(String s);
  }

  private static void appendFields(Sink o, Decision d, boolean explained) {
    o.ascii(d.allowed() ? "\"allowed\":true,\"retryAfterMs\":" : "\"allowed\":false,\"retryAfterMs\":");
    o.number(d.retryAfterMs());
    o.ascii(",\"waitMs\":");
    o.number(d.waitMs());
    if (explained && d.degraded()) {
      o.ascii(",\"degraded\":true");
    }
    o.ascii(",\"items\":[");
    List<ItemDecision> items = d.items();
    for (int i = 0; i < items.size(); i++) {
      ItemDecision it = items.get(i);
      o.ascii(i > 0 ? ",{\"rule\":" : "{\"rule\":");
      o.string(it.rule());
      o.ascii(",\"key\":");
      o.string(it.key());
      o.ascii(",\"cost\":");
      o.number(it.cost());
      if (explained && it.reason() != DenyReason.NONE) {
        o.ascii(",\"reason\":\"");
        o.ascii(REASONS[it.reason().ordinal()]);
        o.ascii("\"");
      }
      if (explained && it.shadow()) {
        o.ascii(",\"shadow\":true");
      }
      if (explained && it.blockedMs() != 0) {
        o.ascii(",\"blockedMs\":" + it.blockedMs());
      }
      if (explained && it.leased()) {
        o.ascii(",\"leased\":true");
      }
      if (explained && it.waitMs() != 0) {
        o.ascii(",\"waitMs\":" + it.waitMs());
      }
      o.ascii(",\"windows\":[");
      List<WindowState> ws = it.windows();
      for (int j = 0; j < ws.size(); j++) {
        WindowState w = ws.get(j);
        o.ascii(j > 0 ? ",{\"limit\":" : "{\"limit\":");
        o.number(w.limit());
        o.ascii(",\"periodMs\":");
        o.number(w.periodMs());
        o.ascii(",\"remaining\":");
        o.number(w.remaining());
        o.ascii(",\"retryAfterMs\":");
        o.number(w.retryAfterMs());
        o.ascii(",\"resetAfterMs\":");
        o.number(w.resetAfterMs());
        o.ascii(w.exceeded() ? ",\"exceeded\":true}" : ",\"exceeded\":false}");
      }
      o.ascii("]}");
    }
    o.ascii("]}");
  }

  /** Appends {@code s} as a JSON string. */
  static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      String escape = escape(c);
      if (escape != null) {
        sb.append(escape);
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }

  /**
   * How {@code c} is written inside a JSON string, or null if as itself. Besides what JSON
   * requires, U+2028 and U+2029 are escaped: they end lines in JavaScript and some line readers.
   */
  private static String escape(char c) {
    return switch (c) {
      case '"' -> "\\\"";
      case '\\' -> "\\\\";
      case '\n' -> "\\n";
      case '\r' -> "\\r";
      case '\t' -> "\\t";
      default -> c < 0x20 || c == '\u2028' || c == '\u2029' ? String.format("\\u%04x", (int) c) : null;
    };
  }

  private static final class Chars implements Sink {
    private final StringBuilder sb;

    Chars(StringBuilder sb) {
      this.sb = sb;
    }

    @Override
    public void ascii(String s) {
      sb.append(s);
    }

    @Override
    public void number(long v) {
      sb.append(v);
    }

    @Override
    public void string(String s) {
      ReferenceDecisionJson.string(sb, s);
    }
  }

  /** UTF-8 into an array sized for the decision up front, so that it rarely grows. */
  private static final class Utf8 implements Sink {
    byte[] buf;
    int len;

    Utf8(Decision d) {
      int n = 96;
      for (ItemDecision it : d.items()) {
        n += 96 + 3 * (it.rule().length() + it.key().length()) + 160 * it.windows().size();
      }
      buf = new byte[n];
    }

    private void room(int n) {
      if (len + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
    }

    @Override
    public void ascii(String s) {
      int n = s.length();
      room(n);
      for (int i = 0; i < n; i++) {
        buf[len + i] = (byte) s.charAt(i);
      }
      len += n;
    }

    @Override
    public void number(long v) {
      room(20);
      if (v < 0) {
        if (v == Long.MIN_VALUE) {
          ascii(Long.toString(v));
          return;
        }
        buf[len++] = '-';
        v = -v;
      }
      int digits = 1;
      for (long p = 10; digits < 19 && v >= p; p *= 10) {
        digits++;
      }
      for (int i = len + digits - 1; i >= len; i--) {
        buf[i] = (byte) ('0' + v % 10);
        v /= 10;
      }
      len += digits;
    }

    @Override
    public void string(String s) {
      room(2 + 6 * s.length());
      buf[len++] = '"';
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c < 0x80 && c >= 0x20 && c != '"' && c != '\\') {
          buf[len++] = (byte) c;
          continue;
        }
        String escape = escape(c);
        if (escape != null) {
          ascii(escape);
        } else if (c < 0x800) {
          buf[len++] = (byte) (0xc0 | c >> 6);
          buf[len++] = (byte) (0x80 | c & 0x3f);
        } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          int cp = Character.toCodePoint(c, s.charAt(++i));
          buf[len++] = (byte) (0xf0 | cp >> 18);
          buf[len++] = (byte) (0x80 | cp >> 12 & 0x3f);
          buf[len++] = (byte) (0x80 | cp >> 6 & 0x3f);
          buf[len++] = (byte) (0x80 | cp & 0x3f);
        } else if (Character.isSurrogate(c)) {
          buf[len++] = '?'; // a lone surrogate has no UTF-8 form; String.getBytes writes '?' too
        } else {
          buf[len++] = (byte) (0xe0 | c >> 12);
          buf[len++] = (byte) (0x80 | c >> 6 & 0x3f);
          buf[len++] = (byte) (0x80 | c & 0x3f);
        }
      }
      buf[len++] = '"';
    }
  }
}
