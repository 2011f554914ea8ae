package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard and the Prometheus alerts in docs/monitoring name only what the service
 * really exports: every metric, label and label value their expressions use is read back from
 * {@code GET /metrics} of a running {@code sluice serve} after traffic, on the memory store and on
 * Redis (some metrics exist on one store only). The alerts are then checked by Prometheus' own
 * {@code promtool}: the rules parse, and fire, or stay silent, on the cases of
 * {@code monitoring/prometheus-alerts-test.yaml}.
 */
class MonitoringFilesTest {
  static final Path DOCS = Path.of("..", "docs", "monitoring");
  static final Path DASHBOARD = DOCS.resolve("grafana-dashboard.json");
  static final Path ALERTS = DOCS.resolve("prometheus-alerts.yaml");

  /** Labels Prometheus adds at scrape time, or that histograms carry. */
  static final Set<String> TARGET_LABELS = Set.of("job", "instance", "le");

  static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)})? ");
  static final Pattern LABEL_PAIR = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
  static final Pattern METRIC_REF = Pattern.compile("\\b(sluice_[a-z0-9_]+)(\\{([^}]*)})?");
  static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"([^\"]*)\"");
  static final Pattern BY = Pattern.compile("\\bby\\s*\\(([^)]*)\\)");

  /** Per metric name exported, its labels and each label's values. */
  static final Map<String, Map<String, Set<String>>> EXPORTED = new HashMap<>();

  @TempDir
  static Path dir;

  @BeforeAll
  static void scrapeAServiceOnEachStore() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config: [{limit: 10, period: 1m}]
          - name: watched
            shadow: true
            config: [{limit: 1, period: 1m}]
          - name: global
            mode: leased
            config: [{limit: 1000000, period: 1s}]
        """);
    scrape(MemoryStore.builder().build());
    try (Standalone redis = Standalone.start(Flavor.REDIS)) {
      scrape(RedisStore.connect(redis.uri()));
    }
  }

  /** Traffic that reaches every outcome, a near-limit admission, a leased rule and a remembered denial. */
  private static void scrape(Store store) throws Exception {
    try (SluiceService service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofMillis(100)).withShutdownGrace(Duration.ZERO), store)) {
      ServiceClient c = new ServiceClient(service.port());
      for (int i = 0; i < 12; i++) {
        c.post("/v1/acquire", "{\"items\":[{\"rule\":\"api\",\"key\":\"k\"},{\"rule\":\"watched\",\"key\":\"k\"}]}");
        c.post("/v1/acquire", "{\"rule\":\"global\",\"key\":\"all\"}");
      }
      HttpResponse<String> metrics = c.get("/metrics");
      assertThat(metrics.statusCode()).isEqualTo(200);
      for (String line : metrics.body().split("\n")) {
        Matcher m = SAMPLE.matcher(line);
        if (line.startsWith("#") || !m.find()) {
          continue;
        }
        Map<String, Set<String>> labels = EXPORTED.computeIfAbsent(m.group(1), k -> new HashMap<>());
        if (m.group(3) != null) {
          Matcher p = LABEL_PAIR.matcher(m.group(3));
          while (p.find()) {
            labels.computeIfAbsent(p.group(1), k -> new TreeSet<>()).add(p.group(2));
          }
        }
      }
    }
  }

  @Test
  void everyDashboardQueryNamesExportedMetricsLabelsAndValues() throws IOException {
    JsonNode dash = new ObjectMapper().readTree(DASHBOARD.toFile());
    List<String> exprs = new ArrayList<>();
    Set<Integer> ids = new HashSet<>();
    for (JsonNode panel : dash.get("panels")) {
      assertThat(ids.add(panel.get("id").asInt())).as("panel ids are unique").isTrue();
      JsonNode pos = panel.get("gridPos");
      assertThat(pos.get("x").asInt() + pos.get("w").asInt()).as(panel.get("title").asText()).isLessThanOrEqualTo(24);
      if (panel.get("type").asText().equals("row")) {
        continue;
      }
      assertThat(panel.get("targets")).as(panel.get("title").asText()).isNotEmpty();
      for (JsonNode t : panel.get("targets")) {
        exprs.add(t.get("expr").asText());
      }
    }
    for (JsonNode v : dash.at("/templating/list")) {
      if (v.has("definition")) {
        exprs.add(v.get("definition").asText());
      }
    }
    assertThat(exprs).hasSizeGreaterThan(20);
    exprs.forEach(MonitoringFilesTest::namesOnlyWhatIsExported);
  }

  @Test
  void everyAlertAndRecordingRuleNamesExportedMetricsLabelsAndValues() throws IOException {
    JsonNode rules = new YAMLMapper().readTree(ALERTS.toFile());
    Set<String> recorded = new HashSet<>();
    List<String> alerts = new ArrayList<>();
    for (JsonNode group : rules.get("groups")) {
      for (JsonNode rule : group.get("rules")) {
        String expr = rule.get("expr").asText();
        // Recording rules' own names (sluice:...) are not metrics of the service; their inputs are.
        namesOnlyWhatIsExported(expr.replaceAll("sluice:[a-z0-9_:]+", "recorded"));
        if (rule.has("record")) {
          recorded.add(rule.get("record").asText());
        } else {
          alerts.add(rule.get("alert").asText());
        }
      }
    }
    assertThat(alerts).contains("SluiceDenyRatioRising", "SluiceStoreDegraded", "SluiceStoreUnready",
        "SluiceNearLimit", "SluiceReloadFailing");
    assertThat(recorded).isNotEmpty();
  }

  @Test
  void promtoolChecksTheRulesAndTheirUnitTestsPass() throws Exception {
    Path work = Files.createTempDirectory(dir, "promtool");
    Files.copy(ALERTS, work.resolve("prometheus-alerts.yaml"));
    try (var in = MonitoringFilesTest.class.getResourceAsStream("/monitoring/prometheus-alerts-test.yaml")) {
      Files.copy(in, work.resolve("prometheus-alerts-test.yaml"));
    }
    assertThat(promtool(work, "check", "rules", "prometheus-alerts.yaml")).contains("SUCCESS");
    assertThat(promtool(work, "test", "rules", "prometheus-alerts-test.yaml")).contains("SUCCESS");
  }

  private static String promtool(Path work, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("promtool"));
    cmd.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError("promtool is not installed; it comes with Debian's prometheus package: "
          + "apt-get install -y --no-install-recommends prometheus", e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  /** Every {@code sluice_*} metric of {@code expr} is exported, with the labels and values it matches on. */
  private static void namesOnlyWhatIsExported(String expr) {
    Set<String> metricsHere = new HashSet<>();
    Matcher m = METRIC_REF.matcher(expr);
    while (m.find()) {
      String name = m.group(1);
      assertThat(EXPORTED).as("%s in %s", name, expr).containsKey(name);
      metricsHere.add(name);
      if (m.group(3) == null) {
        continue;
      }
      Matcher sel = MATCHER.matcher(m.group(3));
      while (sel.find()) {
        String label = sel.group(1);
        if (TARGET_LABELS.contains(label)) {
          continue;
        }
        assertThat(EXPORTED.get(name)).as("label %s of %s in %s", label, name, expr).containsKey(label);
        String value = sel.group(3);
        if (value.contains("$") || value.equals(".*") || sel.group(2).startsWith("!")) {
          continue;
        }
        for (String v : sel.group(2).equals("=~") ? value.split("\\|") : new String[] {value}) {
          assertThat(EXPORTED.get(name).get(label)).as("value %s=%s of %s in %s", label, v, name, expr).contains(v);
        }
      }
    }
    Matcher by = BY.matcher(expr);
    while (by.find()) {
      for (String label : by.group(1).split(",")) {
        String l = label.strip();
        if (l.isEmpty() || TARGET_LABELS.contains(l)) {
          continue;
        }
        assertThat(metricsHere.stream().anyMatch(n -> EXPORTED.get(n).containsKey(l)))
            .as("'by (%s)' in %s: no metric of the expression has the label", l, expr).isTrue();
      }
    }
  }
}
