package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.FleetView;
import dev.sluice.Window;
import dev.sluice.policy.Ban;
import dev.sluice.policy.ListEntry;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.Offender;
import dev.sluice.policy.Page;
import dev.sluice.server.config.SourceFile;
import dev.sluice.server.metrics.DecisionRates;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.List;

/**
 * The body of {@code GET /v1/dashboard}. Every list in it is bounded in count, and the rules'
 * rows also in bytes: past {@link #RULES_BUDGET} no further row is written and the answer says
 * {@code "truncated": true}. With keys of 512 bytes (each escaped to at most 6 bytes a byte in
 * JSON's worst case; list entries, which hold no control character, to 2) the answer stays under
 * {@link #MAX_BYTES}.
 */
final class DashboardJson {
  /** Bytes the rules' rows may take. */
  static final int RULES_BUDGET = 256 * 1024;
  /** Bytes the leases may take, and the access lists' entries. */
  static final int LEASES_BUDGET = 64 * 1024;
  static final int LISTS_BUDGET = 64 * 1024;
  /** Entries listed of each access list. */
  static final int ENTRIES_PER_LIST = 100;
  /** The longest text written of an instance id (the Redis store keeps ids of 256 bytes at most). */
  static final int MAX_ID = 128;
  /** The largest answer: the rules', leases' and lists' budgets and the bounded lists of keys. */
  static final int MAX_BYTES = 880 * 1024;
  /** Windows listed per rule (a tier or override may hold more; the rules endpoint lists all). */
  static final int WINDOWS_PER_RULE = 8;
  /** The longest text written of a file name or an error. */
  static final int MAX_TEXT = 1_000;
  /** Source files listed. */
  static final int MAX_SOURCES = 50;

  private static final JsonFactory JSON = new JsonFactory();
  private static final String[] FIELDS = {"allowed", "denied", "shadowDenied", "degraded", "nearLimit"};

  private DashboardJson() {}

  /** What the admin API allows: whether it is on, needs a token, and lets this caller read keys. */
  record Admin(boolean enabled, boolean needsToken, boolean keysVisible) {}

  /** Top denied keys of one rule. */
  record Top(String rule, List<Offender> keys) {}

  /** What names keys, as the admin API lists it; {@code error} if the store did not answer. */
  record Keys(String error, Page<Ban> bans, Page<KeyLimit> limits, List<Top> top, Page<ListEntry> allowEntries,
      Page<ListEntry> denyEntries) {
    static Keys failed(String error) {
      return new Keys(error, null, null, List.of(), null, null);
    }
  }

  /** The fleet as the limiter lists it; both null when it knows none, {@code error} if the store did not answer. */
  record Fleet(String error, FleetView view) {}

  /** The leased rules in force, and what this instance holds of them when the caller may see keys. */
  record Leases(String error, DashboardLeases.View view, int leasedRules) {}

  /** The panels beside the rules and keys. */
  record Panels(Fleet fleet, Leases leases) {}

  static byte[] write(DashboardView v, Admin admin, Keys keys, Panels panels) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("now", Instant.now().toString());
      g.writeNumberField("pollMillis", DashboardApi.POLL_MILLIS);
      g.writeNumberField("bucketSeconds", DecisionRates.BUCKET_SECONDS);
      g.writeNumberField("buckets", DecisionRates.BUCKETS);
      g.writeObjectFieldStart("admin");
      g.writeBooleanField("enabled", admin.enabled());
      g.writeBooleanField("needsToken", admin.needsToken());
      g.writeBooleanField("keysVisible", admin.keysVisible());
      g.writeEndObject();
      g.writeFieldName("totals");
      counts(g, v.allTotals());
      writeRules(g, v, out);
      writeConfig(g, v);
      writeStore(g, v);
      if (keys != null) {
        writeKeys(g, keys);
      }
      DashboardPanelsJson.fleet(g, panels.fleet(), admin.keysVisible());
      DashboardPanelsJson.leases(g, panels.leases(), admin.keysVisible(), out);
      if (admin.keysVisible()) {
        DashboardPanelsJson.lists(g, v, out);
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static void writeRules(JsonGenerator g, DashboardView v, ByteArrayOutputStream out) throws IOException {
    g.writeObjectFieldStart("rules");
    g.writeNumberField("inForce", v.rulesInForce());
    g.writeNumberField("matching", v.matching());
    g.writeStringField("filter", v.filter());
    g.writeArrayFieldStart("items");
    int start = out.size();
    int written = 0;
    for (DashboardView.Row r : v.rows()) {
      g.flush();
      if (out.size() - start > RULES_BUDGET) {
        break;
      }
      g.writeStartObject();
      g.writeStringField("name", r.rule().name());
      g.writeStringField("algorithm", r.rule().algorithm().configName());
      g.writeBooleanField("shadow", r.rule().shadow());
      g.writeArrayFieldStart("windows");
      List<Window> ws = r.rule().windows();
      for (int i = 0; i < Math.min(ws.size(), WINDOWS_PER_RULE); i++) {
        g.writeStartObject();
        g.writeNumberField("limit", ws.get(i).limit());
        g.writeNumberField("periodMs", ws.get(i).periodMillis());
        g.writeEndObject();
      }
      g.writeEndArray();
      if (r.source() != null) {
        g.writeStringField("source", clip(r.source()));
      }
      g.writeNumberField("allowList", r.allow().size());
      g.writeNumberField("denyList", r.deny().size());
      g.writeFieldName("totals");
      counts(g, r.totals());
      series(g, r.series());
      g.writeEndObject();
      written++;
    }
    g.writeEndArray();
    g.writeBooleanField("truncated", written < v.rows().size());
    g.writeObjectFieldStart("others");
    g.writeNumberField("rules", v.othersCount() + v.rows().size() - written);
    g.writeFieldName("totals");
    counts(g, v.others().totals());
    series(g, v.others().series());
    g.writeEndObject();
    g.writeEndObject();
  }

  private static void writeConfig(JsonGenerator g, DashboardView v) throws IOException {
    g.writeObjectFieldStart("config");
    g.writeNumberField("generation", v.reload().generation());
    g.writeStringField("loadedAt", v.reload().loadedAt().toString());
    g.writeBooleanField("lastReloadOk", v.reload().lastError() == null);
    if (v.reload().lastError() != null) {
      g.writeStringField("lastError", clip(v.reload().lastError()));
      g.writeStringField("lastErrorAt", v.reload().lastErrorAt().toString());
    }
    g.writeNumberField("files", v.sources().size());
    g.writeArrayFieldStart("sources");
    for (SourceFile s : v.sources().subList(0, Math.min(MAX_SOURCES, v.sources().size()))) {
      g.writeStartObject();
      g.writeStringField("file", clip(s.file()));
      g.writeStringField("format", s.format());
      g.writeNumberField("rules", s.rules().size());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void writeStore(JsonGenerator g, DashboardView v) throws IOException {
    g.writeObjectFieldStart("store");
    if (v.health() != null) {
      g.writeBooleanField("failing", v.health().failing());
      g.writeNumberField("failedCalls", v.health().failedCalls());
      g.writeNumberField("failingForMs", v.health().failingFor().toMillis());
    }
    g.writeNumberField("timedDecisions", v.latency().count());
    g.writeNumberField("meanLatencyMicros", Math.round(v.latency().meanMicros() * 10) / 10.0);
    g.writeNumberField("maxLatencyMicros", Math.round(v.latency().maxMicros() * 10) / 10.0);
    g.writeEndObject();
  }

  private static void writeKeys(JsonGenerator g, Keys k) throws IOException {
    g.writeObjectFieldStart("keys");
    if (k.error() != null) {
      g.writeStringField("error", k.error());
      g.writeEndObject();
      return;
    }
    g.writeObjectFieldStart("bans");
    g.writeArrayFieldStart("items");
    for (Ban b : k.bans().items()) {
      g.writeStartObject();
      g.writeStringField("rule", b.rule());
      g.writeStringField("key", b.key());
      g.writeStringField("until", Instant.ofEpochMilli(b.untilMillis()).toString());
      g.writeBooleanField("automatic", b.automatic());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeBooleanField("more", k.bans().next() != null);
    g.writeEndObject();
    g.writeObjectFieldStart("limits");
    g.writeArrayFieldStart("items");
    for (KeyLimit l : k.limits().items()) {
      g.writeStartObject();
      g.writeStringField("rule", l.rule());
      g.writeStringField("key", l.key());
      if (l.limit().tier() != null) {
        g.writeStringField("tier", l.limit().tier());
      } else {
        g.writeArrayFieldStart("windows");
        for (Window w : l.limit().windows()) {
          g.writeStartObject();
          g.writeNumberField("limit", w.limit());
          g.writeNumberField("periodMs", w.periodMillis());
          g.writeEndObject();
        }
        g.writeEndArray();
      }
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeBooleanField("more", k.limits().next() != null);
    g.writeEndObject();
    // Entries added to the access lists at run time (the configured ones are in "lists").
    g.writeObjectFieldStart("listEntries");
    g.writeArrayFieldStart("items");
    for (int which = 0; which < 2; which++) {
      for (ListEntry e : (which == 0 ? k.allowEntries() : k.denyEntries()).items()) {
        g.writeStartObject();
        g.writeStringField("rule", e.rule());
        g.writeStringField("list", which == 0 ? "allow" : "deny");
        g.writeStringField("entry", e.entry());
        g.writeEndObject();
      }
    }
    g.writeEndArray();
    g.writeBooleanField("more", k.allowEntries().next() != null || k.denyEntries().next() != null);
    g.writeEndObject();
    g.writeArrayFieldStart("topDenied");
    for (Top t : k.top()) {
      g.writeStartObject();
      g.writeStringField("rule", t.rule());
      g.writeArrayFieldStart("items");
      for (Offender o : t.keys()) {
        g.writeStartObject();
        g.writeStringField("key", o.key());
        g.writeNumberField("denials", o.denials());
        g.writeNumberField("error", o.error());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void counts(JsonGenerator g, long[] v) throws IOException {
    g.writeStartObject();
    for (int i = 0; i < FIELDS.length; i++) {
      g.writeNumberField(FIELDS[i], v[i]);
    }
    g.writeEndObject();
  }

  /** Per bucket, oldest first: [allowed, denied, shadowDenied, degraded, nearLimit]. */
  private static void series(JsonGenerator g, long[][] s) throws IOException {
    g.writeArrayFieldStart("series");
    for (long[] b : s) {
      g.writeArray(b, 0, b.length);
    }
    g.writeEndArray();
  }

  static String clip(String s) {
    return s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT) + "...";
  }
}
