package dev.sluice.server.cli;

import static dev.sluice.server.cli.Cli.example;
import static dev.sluice.server.cli.Cli.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.server.cli.Cli.Run;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice replay --report}: the page's numbers, read back from its {@code data-*}
 * attributes, are the replay's own — its summary line and its decision lines — on the README's
 * example trace, on the memory store and on Redis; {@code --compare} shows what a changed limit
 * would have decided.
 */
class ReplayReportTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).flushBeforeEach();

  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path dir;

  @Test
  void theReportOfTheExampleTraceSaysWhatTheReplaySaysOnMemory() throws Exception {
    checkExample("memory");
  }

  @Test
  void theReportOfTheExampleTraceSaysWhatTheReplaySaysOnRedis() throws Exception {
    checkExample(redis.get().uri());
  }

  private void checkExample(String store) throws Exception {
    Path page = dir.resolve("report.html");
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--store=" + store,
        "--report", page.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    String html = Files.readString(page);

    // The decision lines: per window (by period), the items it denied; per key, its denials.
    Map<Long, Long> deniedByPeriod = new HashMap<>();
    long deniedUser42 = 0;
    JsonNode summary = null;
    for (String line : r.outLines()) {
      JsonNode n = JSON.readTree(line);
      if (n.has("summary")) {
        summary = n.get("summary");
        continue;
      }
      for (JsonNode it : n.get("items")) {
        for (JsonNode w : it.get("windows")) {
          if (w.get("exceeded").asBoolean()) {
            deniedByPeriod.merge(w.get("periodMs").asLong(), 1L, Long::sum);
          }
        }
        if (!n.get("allowed").asBoolean() && it.get("key").asText().equals("user:42")) {
          deniedUser42++;
        }
      }
    }
    assertThat(summary).isNotNull();
    JsonNode rule = summary.at("/rules/auth.createToken");
    assertThat(rule.get("denied").asLong()).as("the example trace is one that denies").isPositive();

    assertThat(cell(html, "summary", "auth.createToken", 0, "allowed")).isEqualTo(rule.get("allowed").asLong());
    assertThat(cell(html, "summary", "auth.createToken", 0, "denied")).isEqualTo(rule.get("denied").asLong());
    assertThat(cell(html, "summary", "*", 0, "allowed")).isEqualTo(summary.get("allowed").asLong());
    assertThat(cell(html, "summary", "*", 0, "denied")).isEqualTo(summary.get("denied").asLong());
    assertThat(html).contains("id=\"meta\" data-requests=\"" + summary.get("requests").asLong() + "\"");

    assertThat(deniedByPeriod).containsOnlyKeys(3000L);
    assertThat(byWindow(html, "auth.createToken", 3000, 0)).isEqualTo(deniedByPeriod.get(3000L));
    assertThat(byWindow(html, "auth.createToken", 60000, 0)).isZero();

    assertThat(html).containsPattern("data-key=\"user:42\"><code>user:42</code></td><td data-side=\"0\" "
        + "data-field=\"denied\">" + deniedUser42 + "</td>");
    // One chart per window of the rule, its limit stated.
    assertThat(html).contains("data-limit=\"5\" data-period-ms=\"3000\"", "data-limit=\"20\" data-period-ms=\"60000\"");
    // Self-contained: nothing fetched, no script.
    assertThat(html).doesNotContain("<script", "src=\"http", "href=\"http");
  }

  @Test
  void compareShowsWhatAChangedLimitWouldHaveDecidedOnTheSameTrace() throws Exception {
    Path other = dir.resolve("limits-7.yaml");
    String limits = Files.readString(Path.of(example("limits.yaml")));
    assertThat(limits).contains("      - limit: 5\n        period: 3\n");
    Files.writeString(other, limits.replace("      - limit: 5\n        period: 3\n", "      - limit: 7\n        period: 3\n"));
    Path page = dir.resolve("compare.html");
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--summary-only",
        "--report", page.toString(), "--compare", other.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    Run alone = run("replay", "--config", other.toString(), "--trace", example("trace.jsonl"), "--summary-only");
    JsonNode a = JSON.readTree(r.out()).at("/summary/rules/auth.createToken");
    JsonNode b = JSON.readTree(alone.out()).at("/summary/rules/auth.createToken");
    assertThat(b.get("denied").asLong()).as("the changed limit denies less").isLessThan(a.get("denied").asLong());

    String html = Files.readString(page);
    assertThat(cell(html, "summary", "auth.createToken", 0, "denied")).isEqualTo(a.get("denied").asLong());
    assertThat(cell(html, "summary", "auth.createToken", 1, "allowed")).isEqualTo(b.get("allowed").asLong());
    assertThat(cell(html, "summary", "auth.createToken", 1, "denied")).isEqualTo(b.get("denied").asLong());
    long change = b.get("denied").asLong() - a.get("denied").asLong();
    assertThat(html).contains("data-field=\"change\" class=\"better\">" + change + "</td>");
    assertThat(byWindow(html, "auth.createToken", 3000, 1)).isEqualTo(b.get("denied").asLong());
    assertThat(html).contains("<span data-side=\"1\" data-denied=\"" + b.get("denied").asLong() + "\" data-limit=\"7\"");
  }

  @Test
  void keysFromTheTraceAreShownAsTextNeverAsMarkup() throws Exception {
    Path trace = dir.resolve("t.jsonl");
    StringBuilder t = new StringBuilder();
    for (int i = 0; i < 7; i++) {
      t.append("{\"t\":").append(i).append(",\"rule\":\"auth.createToken\",\"key\":\"<script>alert(1)</script>\\\"'&\"}\n");
    }
    Files.writeString(trace, t);
    Path page = dir.resolve("escaped.html");
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", trace.toString(), "--summary-only",
        "--report", page.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    String html = Files.readString(page);
    assertThat(html).doesNotContain("<script").contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;");
  }

  @Test
  void aTraceOfDaysIsDrawnInAtMostTheReportsPoints() throws Exception {
    Path trace = dir.resolve("long.jsonl");
    StringBuilder t = new StringBuilder();
    long day = 86_400_000L;
    for (int i = 0; i < 2000; i++) {
      t.append("{\"t\":").append(i * (10 * day / 2000)).append(",\"rule\":\"auth.createToken\",\"key\":\"k")
          .append(i % 3).append("\"}\n");
    }
    Files.writeString(trace, t);
    Path page = dir.resolve("long.html");
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", trace.toString(), "--summary-only",
        "--report", page.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    String html = Files.readString(page);
    Matcher m = Pattern.compile("data-bucket-ms=\"(\\d+)\"").matcher(html);
    assertThat(m.find()).isTrue();
    long width = Long.parseLong(m.group(1));
    assertThat(width * ReplayReport.BUCKETS).as("the points cover the trace").isGreaterThanOrEqualTo(10 * day - day / 200);
    assertThat(width).as("and no more than twice over").isLessThan(2 * 10 * day / ReplayReport.BUCKETS + 1);
    Matcher points = Pattern.compile("<polyline[^>]*points=\"([^\"]*)\"").matcher(html);
    while (points.find()) {
      // Two points per step at most, and a last one.
      assertThat(points.group(1).strip().split(" ")).hasSizeLessThanOrEqualTo(2 * ReplayReport.BUCKETS + 1);
    }
    assertThat(cell(html, "summary", "*", 0, "allowed") + cell(html, "summary", "*", 0, "denied")).isEqualTo(2000);
  }

  @Test
  void compareWithoutAReportIsRefusedAndABadCompareFileIsNamed() throws Exception {
    Run r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--compare",
        example("limits.yaml"));
    assertThat(r.exit()).isNotZero();
    assertThat(r.err()).contains("--compare needs --report FILE");
    r = run("replay", "--config", example("limits.yaml"), "--trace", example("trace.jsonl"), "--report",
        dir.resolve("x.html").toString(), "--compare", example("bad.yaml"));
    assertThat(r.exit()).isNotZero();
    assertThat(r.err()).contains("--compare", "bad.yaml");
    assertThat(dir.resolve("x.html")).doesNotExist();
  }

  /** The number in a cell of {@code table}'s row for {@code rule}, on {@code side}. */
  private static long cell(String html, String table, String rule, int side, String field) {
    int start = html.indexOf("<table id=\"" + table + "\"");
    String t = html.substring(start, html.indexOf("</table>", start));
    Matcher row = Pattern.compile("<tr data-rule=\"" + Pattern.quote(rule) + "\">(.*?)</tr>").matcher(t);
    assertThat(row.find()).as("row %s of %s", rule, table).isTrue();
    Matcher c = Pattern.compile("data-side=\"" + side + "\" data-field=\"" + field + "\">(-?\\d+)<").matcher(row.group(1));
    assertThat(c.find()).as("%s of side %d in row %s", field, side, rule).isTrue();
    return Long.parseLong(c.group(1));
  }

  private static long byWindow(String html, String rule, long periodMs, int side) {
    Matcher row = Pattern.compile("<tr data-rule=\"" + Pattern.quote(rule) + "\" data-period-ms=\"" + periodMs
        + "\">(.*?)</tr>").matcher(html);
    assertThat(row.find()).as("window %d of %s", periodMs, rule).isTrue();
    Matcher c = Pattern.compile("data-side=\"" + side + "\" data-field=\"denied\">(\\d+)<").matcher(row.group(1));
    assertThat(c.find()).isTrue();
    return Long.parseLong(c.group(1));
  }
}
