package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.FleetView;
import dev.sluice.internal.lease.UsageReport;
import dev.sluice.spi.LeaseBoard;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;

/**
 * The fleet, leases and access lists of {@code GET /v1/dashboard}. What names instances or keys
 * (instance ids, leased keys, list entries) is written only for a caller who may see keys; the
 * leases and lists stop at their byte budgets ({@link DashboardJson#LEASES_BUDGET},
 * {@link DashboardJson#LISTS_BUDGET}) and say {@code "truncated": true}.
 */
final class DashboardPanelsJson {
  private DashboardPanelsJson() {}

  static void fleet(JsonGenerator g, DashboardJson.Fleet f, boolean keys) throws IOException {
    if (f.error() == null && f.view() == null) {
      return; // a limiter that knows no fleet
    }
    g.writeObjectFieldStart("fleet");
    if (f.error() != null) {
      g.writeStringField("error", f.error());
      g.writeEndObject();
      return;
    }
    FleetView v = f.view();
    g.writeNumberField("live", v.live());
    if (keys) {
      g.writeStringField("self", id(v.self()));
      g.writeArrayFieldStart("instances");
      for (FleetView.Instance i : v.instances()) {
        g.writeStartObject();
        g.writeStringField("id", id(i.id()));
        g.writeNumberField("lastHeartbeatAgeMs", i.lastHeartbeatAgeMillis());
        g.writeBooleanField("self", i.id().equals(v.self()));
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeNumberField("more", Math.max(0, v.live() - v.instances().size()));
    }
    g.writeEndObject();
  }

  static void leases(JsonGenerator g, DashboardJson.Leases l, boolean keys, ByteArrayOutputStream out)
      throws IOException {
    g.writeObjectFieldStart("leases");
    g.writeNumberField("leasedRules", l.leasedRules());
    if (keys && l.error() != null) {
      g.writeStringField("error", l.error());
    } else if (keys && l.view() != null) {
      DashboardLeases.View v = l.view();
      LeaseBoard.Leader leader = v.leader();
      if (leader == null || leader.instance() == null || leader.untilMillis() <= leader.nowMillis()) {
        g.writeNullField("leader");
      } else {
        g.writeObjectFieldStart("leader");
        g.writeStringField("instance", id(leader.instance()));
        g.writeBooleanField("self", leader.instance().equals(v.self()));
        g.writeNumberField("termLeftMs", leader.untilMillis() - leader.nowMillis());
        g.writeEndObject();
      }
      g.writeBooleanField("reported", v.reported());
      g.writeNumberField("intervalMs", v.intervalMs());
      g.writeNumberField("instances", v.instances());
      g.writeBooleanField("partial", v.partial());
      g.flush();
      int start = out.size();
      boolean truncated = false;
      g.writeArrayFieldStart("rules");
      for (DashboardLeases.LeasedRule r : v.rules()) {
        g.writeStartObject();
        g.writeStringField("name", r.rule().name());
        g.writeNumberField("keysReported", r.keysReported());
        g.writeNumberField("unitsHeld", r.unitsHeld());
        g.writeArrayFieldStart("keys");
        for (UsageReport.Entry e : r.keys()) {
          g.flush();
          if (out.size() - start > DashboardJson.LEASES_BUDGET) {
            truncated = true;
            break;
          }
          g.writeStartObject();
          g.writeStringField("key", e.key());
          g.writeNumberField("held", e.held());
          g.writeNumberField("sizeInUse", e.sizeInUse());
          g.writeNumberField("admitted", e.admitted());
          g.writeNumberField("sentToStore", e.sent());
          g.writeNumberField("budget", r.budgets().applyAsLong(e.key()));
          g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
        if (truncated) {
          break;
        }
      }
      g.writeEndArray();
      g.writeBooleanField("truncated", truncated);
    }
    g.writeEndObject();
  }

  /** The configured access lists of the rules in the rows, at most {@link DashboardJson#ENTRIES_PER_LIST} entries each. */
  static void lists(JsonGenerator g, DashboardView v, ByteArrayOutputStream out) throws IOException {
    g.writeObjectFieldStart("lists");
    g.flush();
    int start = out.size();
    boolean truncated = false;
    g.writeArrayFieldStart("items");
    for (DashboardView.Row r : v.rows()) {
      for (int k = 0; k < 2 && !truncated; k++) {
        List<String> entries = k == 0 ? r.allow() : r.deny();
        if (entries.isEmpty()) {
          continue;
        }
        g.writeStartObject();
        g.writeStringField("rule", r.rule().name());
        g.writeStringField("list", k == 0 ? "allow" : "deny");
        g.writeNumberField("size", entries.size());
        g.writeArrayFieldStart("entries");
        int written = 0;
        for (String e : entries.subList(0, Math.min(DashboardJson.ENTRIES_PER_LIST, entries.size()))) {
          g.flush();
          if (out.size() - start > DashboardJson.LISTS_BUDGET) {
            truncated = true;
            break;
          }
          g.writeString(e);
          written++;
        }
        g.writeEndArray();
        g.writeNumberField("more", entries.size() - written);
        g.writeEndObject();
      }
      if (truncated) {
        break;
      }
    }
    g.writeEndArray();
    g.writeBooleanField("truncated", truncated);
    g.writeEndObject();
  }

  private static String id(String s) {
    return s.length() <= DashboardJson.MAX_ID ? s : s.substring(0, DashboardJson.MAX_ID) + "...";
  }
}
