package dev.sluice.server.cli;

import dev.sluice.server.cli.ReplayReport.RuleStats;
import dev.sluice.server.cli.ReplayReport.Series;
import dev.sluice.server.cli.ReplayReport.Side;
import dev.sluice.server.cli.ReplayReport.WindowStats;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The page of {@code sluice replay --report}: one self-contained HTML file (inline CSS and SVG,
 * no script, nothing fetched), so that it can be mailed, attached to a change, or opened offline.
 *
 * <p>Every number a reader compares is also in a {@code data-*} attribute (side, rule, window,
 * field), which is how the tests read the page back. Rule names and keys come from the trace and
 * the configuration, so they are escaped wherever they appear: a trace is data, and a key such as
 * {@code <script>} must show as text.
 */
final class ReplayReportPage {
  /** Rules charted at most, those with the most denials first; the tables list every rule. */
  static final int MAX_CHARTED_RULES = 50;
  static final int TOP_KEYS = 20;

  private static final int W = 720;
  private static final int H = 150;
  private static final int LEFT = 48;
  private static final int TOP = 10;
  private static final int PLOT_W = W - LEFT - 10;
  private static final int PLOT_H = H - TOP - 24;
  private static final String[] COLOURS = {"#1f6fb2", "#2e9d4b"};
  private static final String[] LIMIT_COLOURS = {"#c0392b", "#d68910"};

  private final ReplayReport report;
  private final StringBuilder b = new StringBuilder(64 * 1024);

  ReplayReportPage(ReplayReport report) {
    this.report = report;
  }

  String render() {
    ReplayReport.Timeline tl = report.timeline;
    Side first = report.sides.get(0);
    b.append("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Sluice replay: ");
    text(report.traceName);
    b.append("</title>\n<style>\n")
        .append("body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\n")
        .append("table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;"
            + "text-align:right}td:first-child,th:first-child{text-align:left}\n")
        .append("th{background:#f3f3f3}.meta{color:#555}.more{color:#a00}.worse{color:#a00}.better{color:#070}\n")
        .append("svg{display:block;margin:4px 0 2px}.legend span{margin-right:14px}.sw{display:inline-block;"
            + "width:18px;height:3px;vertical-align:middle;margin-right:4px}\n")
        .append("</style></head><body>\n");
    b.append("<h1>Replay of <code>");
    text(report.traceName);
    b.append("</code></h1>\n<p class=\"meta\" id=\"meta\" data-requests=\"").append(first.requests)
        .append("\" data-bucket-ms=\"").append(tl.widthMs).append("\">");
    b.append(first.requests).append(" requests");
    if (first.requests > 0) {
      b.append(" from ").append(Instant.ofEpochMilli(tl.startMs)).append(" to ").append(Instant.ofEpochMilli(tl.endMs))
          .append(" (").append(duration(tl.endMs - tl.startMs)).append(" of trace time)");
    }
    b.append(". Each chart point is ").append(duration(tl.widthMs)).append(".");
    for (int i = 0; i < report.sides.size(); i++) {
      b.append("<br><span class=\"sw\" style=\"background:").append(COLOURS[i]).append("\"></span>")
          .append(i == 0 ? "Rules: " : "Compared with: ").append("<code>");
      text(report.sides.get(i).name);
      b.append("</code>");
    }
    b.append("</p>\n");
    summary();
    charts();
    deniedByWindow();
    topKeys();
    b.append("</body></html>\n");
    return b.toString();
  }

  private void summary() {
    boolean compare = report.sides.size() > 1;
    b.append("<h2>Decisions</h2>\n<table id=\"summary\">");
    if (compare) {
      b.append("<tr><th></th>");
      for (Side s : report.sides) {
        b.append("<th colspan=\"3\"><code>");
        text(s.name);
        b.append("</code></th>");
      }
      b.append("<th></th></tr>");
    }
    b.append("<tr><th>rule</th>");
    for (Side s : report.sides) {
      b.append("<th>allowed</th><th>denied</th><th>shadow denied</th>");
    }
    if (compare) {
      b.append("<th>denied: change</th>");
    }
    b.append("</tr>\n<tr data-rule=\"*\"><td><b>requests</b></td>");
    for (int i = 0; i < report.sides.size(); i++) {
      Side s = report.sides.get(i);
      cell(i, "allowed", s.allowed);
      cell(i, "denied", s.requests - s.allowed);
      b.append("<td></td>");
    }
    if (compare) {
      change((report.sides.get(1).requests - report.sides.get(1).allowed)
          - (report.sides.get(0).requests - report.sides.get(0).allowed));
    }
    b.append("</tr>\n");
    for (String rule : rulesSeen()) {
      b.append("<tr data-rule=\"");
      attr(rule);
      b.append("\"><td>");
      text(rule);
      b.append("</td>");
      long[] denied = new long[report.sides.size()];
      for (int i = 0; i < report.sides.size(); i++) {
        RuleStats r = report.sides.get(i).perRule.get(rule);
        if (r == null) {
          b.append("<td colspan=\"3\" class=\"meta\">not in this rule set</td>");
          continue;
        }
        cell(i, "allowed", r.allowed);
        cell(i, "denied", r.denied);
        denied[i] = r.denied;
        if (r.rule != null && r.rule.shadow()) {
          cell(i, "shadowDenied", r.shadowDenied);
        } else {
          b.append("<td></td>");
        }
      }
      if (compare) {
        change(denied[1] - denied[0]);
      }
      b.append("</tr>\n");
    }
    b.append("</table>\n<p class=\"meta\">Per rule, the items of admitted and of denied requests, as the replay's "
        + "summary line counts them: a request's items are admitted or denied together.</p>\n");
  }

  private void charts() {
    Side first = report.sides.get(0);
    List<RuleStats> rules = new ArrayList<>(first.rulesSeen());
    rules.sort((x, y) -> Long.compare(y.denied, x.denied));
    b.append("<h2>Windows over time</h2>\n<p class=\"meta\">Per window, the use of the fullest key (its limit less "
        + "the least <code>remaining</code> a decision reported in each point) against the limit, and the items the "
        + "window denied (bars).</p>\n");
    int charted = 0;
    for (RuleStats r : rules) {
      if (charted++ == MAX_CHARTED_RULES) {
        b.append("<p class=\"more\">").append(rules.size() - MAX_CHARTED_RULES)
            .append(" more rules are not charted; the tables list them.</p>\n");
        break;
      }
      b.append("<section class=\"rule\" data-rule=\"");
      attr(r.rule == null ? "" : r.rule.name());
      b.append("\"><h3>");
      text(r.rule == null ? "" : r.rule.name());
      b.append("</h3>\n");
      for (WindowStats w : r.windows.values()) {
        List<WindowStats> peers = new ArrayList<>();
        peers.add(w);
        for (int i = 1; i < report.sides.size(); i++) {
          RuleStats other = report.sides.get(i).perRule.get(r.rule == null ? "" : r.rule.name());
          peers.add(other == null ? null : samePeriod(other, w.periodMs));
        }
        chart(w, peers);
      }
      b.append("</section>\n");
    }
  }

  private static WindowStats samePeriod(RuleStats r, long periodMs) {
    for (WindowStats w : r.windows.values()) {
      if (w.periodMs == periodMs) {
        return w;
      }
    }
    return null;
  }

  private void chart(WindowStats w, List<WindowStats> peers) {
    ReplayReport.Timeline tl = report.timeline;
    int n = (int) Math.min(ReplayReport.BUCKETS, (tl.endMs - tl.startMs) / tl.widthMs + 1);
    long top = 1;
    long deniedTop = 1;
    for (WindowStats p : peers) {
      if (p == null || p.used.v == null) {
        continue;
      }
      top = Math.max(top, p.limit);
      for (int i = 0; i < n; i++) {
        top = Math.max(top, p.used.v[i]);
        deniedTop = Math.max(deniedTop, p.denied.v[i]);
      }
    }
    b.append("<div class=\"window\" data-limit=\"").append(w.limit).append("\" data-period-ms=\"").append(w.periodMs)
        .append("\"><b>").append(w.limit).append(" per ").append(duration(w.periodMs)).append("</b>");
    if (w.used.v == null) {
      b.append(" <span class=\"meta\">(not charted: the report keeps ").append(ReplayReport.MAX_SERIES)
          .append(" series)</span></div>\n");
      return;
    }
    b.append("\n<svg width=\"").append(W).append("\" height=\"").append(H).append("\" viewBox=\"0 0 ").append(W)
        .append(' ').append(H).append("\" role=\"img\">");
    b.append("<rect x=\"").append(LEFT).append("\" y=\"").append(TOP).append("\" width=\"").append(PLOT_W)
        .append("\" height=\"").append(PLOT_H).append("\" fill=\"#fafafa\" stroke=\"#ddd\"/>");
    b.append("<text x=\"").append(LEFT - 4).append("\" y=\"").append(TOP + 10).append("\" text-anchor=\"end\" "
        + "font-size=\"11\">").append(top).append("</text><text x=\"").append(LEFT - 4).append("\" y=\"")
        .append(TOP + PLOT_H).append("\" text-anchor=\"end\" font-size=\"11\">0</text>");
    b.append("<text x=\"").append(LEFT).append("\" y=\"").append(H - 6).append("\" font-size=\"11\">0</text>");
    b.append("<text x=\"").append(LEFT + PLOT_W).append("\" y=\"").append(H - 6)
        .append("\" text-anchor=\"end\" font-size=\"11\">").append(duration(tl.endMs - tl.startMs)).append("</text>");
    for (int s = 0; s < peers.size(); s++) {
      WindowStats p = peers.get(s);
      if (p == null || p.used.v == null) {
        continue;
      }
      // The denials as bars along the bottom fifth, then the limit, then the use.
      for (int i = 0; i < n; i++) {
        if (p.denied.v[i] > 0) {
          double h = Math.max(1, PLOT_H / 5.0 * p.denied.v[i] / deniedTop);
          b.append("<rect x=\"").append(fmt(x(i, n) - 1 + s * 2)).append("\" y=\"").append(fmt(TOP + PLOT_H - h))
              .append("\" width=\"2\" height=\"").append(fmt(h)).append("\" fill=\"").append(LIMIT_COLOURS[s])
              .append("\" opacity=\"0.6\"/>");
        }
      }
      double ly = y(p.limit, top);
      b.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(LEFT + PLOT_W).append("\" y1=\"").append(fmt(ly))
          .append("\" y2=\"").append(fmt(ly)).append("\" stroke=\"").append(LIMIT_COLOURS[s])
          .append("\" stroke-dasharray=\"5 3\"/>");
      // A step line through the points where decisions reported the window, held in between.
      b.append("<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"").append(COLOURS[s]).append("\" points=\"");
      long last = ReplayReport.NONE;
      for (int i = 0; i < n; i++) {
        long v = p.used.v[i];
        if (v == ReplayReport.NONE) {
          continue;
        }
        if (last != ReplayReport.NONE) {
          b.append(fmt(x(i, n))).append(',').append(fmt(y(last, top))).append(' ');
        }
        b.append(fmt(x(i, n))).append(',').append(fmt(y(v, top))).append(' ');
        last = v;
      }
      if (last != ReplayReport.NONE) {
        b.append(fmt(x(n - 1, n))).append(',').append(fmt(y(last, top)));
      }
      b.append("\"/>");
    }
    b.append("</svg>\n<div class=\"legend\">");
    for (int s = 0; s < peers.size(); s++) {
      WindowStats p = peers.get(s);
      b.append("<span data-side=\"").append(s).append("\"");
      if (p != null) {
        b.append(" data-denied=\"").append(p.deniedTotal).append("\" data-limit=\"").append(p.limit).append("\"");
      }
      b.append("><span class=\"sw\" style=\"background:").append(COLOURS[s]).append("\"></span>");
      if (p == null) {
        b.append("no ").append(duration(w.periodMs)).append(" window");
      } else {
        b.append("limit ").append(p.limit).append(", ").append(p.deniedTotal).append(" denied");
      }
      b.append("</span>");
    }
    b.append("</div></div>\n");
  }

  private void deniedByWindow() {
    b.append("<h2>Denials by window</h2>\n<table id=\"by-window\"><tr><th>rule</th><th>window</th>");
    for (int i = 0; i < report.sides.size(); i++) {
      b.append("<th>").append(i == 0 ? "denied" : "denied (compared)").append("</th>");
    }
    b.append("</tr>\n");
    for (String rule : rulesSeen()) {
      Map<Long, long[]> byPeriod = new LinkedHashMap<>();
      Map<Long, String> labels = new LinkedHashMap<>();
      for (int i = 0; i < report.sides.size(); i++) {
        RuleStats r = report.sides.get(i).perRule.get(rule);
        if (r == null) {
          continue;
        }
        for (WindowStats w : r.windows.values()) {
          byPeriod.computeIfAbsent(w.periodMs, k -> new long[report.sides.size()])[i] += w.deniedTotal;
          labels.merge(w.periodMs, w.limit + " per " + duration(w.periodMs) + (i == 0 ? "" : " (compared)"),
              (a, c) -> a.contains(c.replace(" (compared)", "")) ? a : a + " / " + c);
        }
      }
      for (Map.Entry<Long, long[]> e : byPeriod.entrySet()) {
        b.append("<tr data-rule=\"");
        attr(rule);
        b.append("\" data-period-ms=\"").append(e.getKey()).append("\"><td>");
        text(rule);
        b.append("</td><td>");
        text(labels.get(e.getKey()));
        b.append("</td>");
        for (int i = 0; i < e.getValue().length; i++) {
          cell(i, "denied", e.getValue()[i]);
        }
        b.append("</tr>\n");
      }
    }
    b.append("</table>\n<p class=\"meta\">An item denied by two windows at once counts in both.</p>\n");
  }

  private void topKeys() {
    b.append("<h2>Top denied keys</h2>\n");
    for (int i = 0; i < report.sides.size(); i++) {
      Side s = report.sides.get(i);
      if (report.sides.size() > 1) {
        b.append("<h3>");
        text(s.name);
        b.append("</h3>\n");
      }
      b.append("<table class=\"top\" data-side=\"").append(i).append("\"><tr><th>rule</th><th>key</th>"
          + "<th>denied</th></tr>\n");
      for (Map.Entry<String, long[]> e : s.topDenied(TOP_KEYS)) {
        String k = e.getKey();
        int sp = k.indexOf(' ');
        b.append("<tr><td>");
        text(k.substring(0, sp));
        b.append("</td><td data-key=\"");
        attr(k.substring(sp + 1));
        b.append("\"><code>");
        text(k.substring(sp + 1));
        b.append("</code></td>");
        cell(i, "denied", e.getValue()[0]);
        b.append("</tr>\n");
      }
      b.append("</table>\n");
      if (s.otherKeyDenials > 0) {
        b.append("<p class=\"meta\">").append(s.otherKeyDenials).append(" denials of keys met after the report "
            + "held ").append(ReplayReport.MAX_KEY_CHARS >> 20).append(" MB of keys are not listed.</p>\n");
      }
    }
  }

  private List<String> rulesSeen() {
    List<String> names = new ArrayList<>();
    for (Side s : report.sides) {
      for (RuleStats r : s.rulesSeen()) {
        if (!names.contains(r.rule.name())) {
          names.add(r.rule.name());
        }
      }
    }
    return names;
  }

  private void cell(int side, String field, long v) {
    b.append("<td data-side=\"").append(side).append("\" data-field=\"").append(field).append("\">").append(v)
        .append("</td>");
  }

  private void change(long d) {
    b.append("<td data-field=\"change\" class=\"").append(d > 0 ? "worse" : d < 0 ? "better" : "")
        .append("\">").append(d > 0 ? "+" : "").append(d).append("</td>");
  }

  private static double x(int i, int n) {
    return LEFT + (n <= 1 ? 0 : (double) PLOT_W * i / (n - 1));
  }

  private static double y(long v, long top) {
    return TOP + PLOT_H - (double) PLOT_H * v / top;
  }

  private static String fmt(double d) {
    return String.format(Locale.ROOT, "%.1f", d);
  }

  static String duration(long ms) {
    if (ms % 86_400_000 == 0 && ms > 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0 && ms > 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0 && ms > 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0 && ms > 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }

  private void text(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '&' -> b.append("&amp;");
        default -> b.append(c);
      }
    }
  }

  private void attr(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '&' -> b.append("&amp;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(c);
      }
    }
  }
}
