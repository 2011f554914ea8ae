package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A decision as JSON, the shape {@code sluice replay} prints:
 * {@code {"allowed","retryAfterMs","waitMs","items":[{"rule","key","cost","windows":[{"limit",
 * "periodMs","remaining","retryAfterMs","resetAfterMs","exceeded"}]}]}}, plus {@code "degraded":
 * true} when the store failed, and per item {@code "reason"} when it was denied and
 * {@code "shadow": true} for a shadow rule. A {@code retryAfterMs} of -1 means the cost can never
 * fit.
 */
public final class DecisionJson {
  private static final JsonFactory JSON = new JsonFactory();

  private DecisionJson() {}

  public static byte[] toBytes(Decision d) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeBooleanField("allowed", d.allowed());
      g.writeNumberField("retryAfterMs", d.retryAfterMs());
      g.writeNumberField("waitMs", d.waitMs());
      if (d.degraded()) {
        g.writeBooleanField("degraded", true);
      }
      g.writeArrayFieldStart("items");
      for (ItemDecision it : d.items()) {
        g.writeStartObject();
        g.writeStringField("rule", it.rule());
        g.writeStringField("key", it.key());
        g.writeNumberField("cost", it.cost());
        if (it.reason() != DenyReason.NONE) {
          g.writeStringField("reason", it.reason().wireName());
        }
        if (it.shadow()) {
          g.writeBooleanField("shadow", true);
        }
        g.writeArrayFieldStart("windows");
        for (WindowState w : it.windows()) {
          g.writeStartObject();
          g.writeNumberField("limit", w.limit());
          g.writeNumberField("periodMs", w.periodMs());
          g.writeNumberField("remaining", w.remaining());
          g.writeNumberField("retryAfterMs", w.retryAfterMs());
          g.writeNumberField("resetAfterMs", w.resetAfterMs());
          g.writeBooleanField("exceeded", w.exceeded());
          g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
