package dev.sluice.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.linecorp.armeria.common.HttpData;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.WindowState;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.Arrays;
import java.util.List;

/**
 * A decision as JSON, in the one shape of SPEC §7 that {@code sluice replay} prints and the HTTP
 * API answers: {@code {"allowed","retryAfterMs","waitMs","items":[{"rule","key","cost","windows":
 * [{"limit","periodMs","remaining","retryAfterMs","resetAfterMs","exceeded"}]}]}}. A
 * {@code retryAfterMs} of -1 means the cost can never fit. Written with Jackson's streaming
 * generator: a hand-written writer was measured 0.2 to 0.6 µs faster per answer (see {@code
 * DecisionJsonBenchmark}), 1 to 5% of a request's CPU in the service, which does not pay for
 * owning an escaper.
 */
public final class DecisionJson {
  /**
   * Escapes as the service always has, so that clients see the same bytes: lowercase hex, a
   * character outside the BMP as its four UTF-8 bytes rather than two escaped surrogates (which
   * Jackson writes once custom escapes are set unless told otherwise).
   */
  private static final JsonFactory FACTORY = new JsonFactoryBuilder()
      .disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
      .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
      .disable(StreamWriteFeature.AUTO_CLOSE_TARGET)
      .characterEscapes(new Escapes())
      .build();
  private static final SerializableString[] REASONS = Arrays.stream(DenyReason.values())
      .map(r -> new SerializedString(r.wireName())).toArray(SerializableString[]::new);
  private static final SerializedString T = new SerializedString("t");
  private static final SerializedString ALLOWED = new SerializedString("allowed");
  private static final SerializedString RETRY_AFTER_MS = new SerializedString("retryAfterMs");
  private static final SerializedString WAIT_MS = new SerializedString("waitMs");
  private static final SerializedString DEGRADED = new SerializedString("degraded");
  private static final SerializedString ITEMS = new SerializedString("items");
  private static final SerializedString RULE = new SerializedString("rule");
  private static final SerializedString KEY = new SerializedString("key");
  private static final SerializedString COST = new SerializedString("cost");
  private static final SerializedString REASON = new SerializedString("reason");
  private static final SerializedString SHADOW = new SerializedString("shadow");
  private static final SerializedString BLOCKED_MS = new SerializedString("blockedMs");
  private static final SerializedString LEASED = new SerializedString("leased");
  private static final SerializedString WINDOWS = new SerializedString("windows");
  private static final SerializedString LIMIT = new SerializedString("limit");
  private static final SerializedString PERIOD_MS = new SerializedString("periodMs");
  private static final SerializedString REMAINING = new SerializedString("remaining");
  private static final SerializedString RESET_AFTER_MS = new SerializedString("resetAfterMs");
  private static final SerializedString EXCEEDED = new SerializedString("exceeded");

  private DecisionJson() {}

  /**
   * Appends a replay line: the decision with {@code "t"} first. Replay leaves out the service's
   * extra fields, so that its output depends on the rules and the trace alone.
   */
  public static void appendReplayLine(StringBuilder sb, long t, Decision d) {
    try (JsonGenerator g = FACTORY.createGenerator(new Appending(sb))) {
      g.writeStartObject();
      g.writeFieldName(T);
      g.writeNumber(t);
      write(g, d, false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The body of an HTTP answer: the decision plus {@code "degraded": true} when the store failed,
   * and per item {@code "reason"} when it was denied, {@code "shadow": true} for a shadow rule,
   * and {@code "blockedMs"} for an item denied by a ban (the time it still lasts) or a deny list
   * (-1: never admitted). Those items were not decided by the store: their windows are empty.
   * The field is left out when 0, so that answers without policies keep their bytes. An item
   * admitted from the units this instance holds of a leased rule has {@code "leased": true}: its
   * windows are this instance's view ({@link ItemDecision#leased}); the field is left out of every
   * other item. Replay decides at the trace's times, which leased mode decides exactly, so its
   * lines never have it.
   */
  public static HttpData httpBody(Decision d) {
    Bytes out = new Bytes(expectedSize(d));
    try (JsonGenerator g = FACTORY.createGenerator(out)) {
      g.writeStartObject();
      write(g, d, true);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.data();
  }

  /** Appends {@code s} as a JSON string, escaped as in decisions. */
  public static void string(StringBuilder sb, String s) {
    try (JsonGenerator g = FACTORY.createGenerator(new Appending(sb))) {
      g.writeString(s);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Room for the body of {@code d} with ASCII text, so that the array does not grow as a rule. */
  private static int expectedSize(Decision d) {
    int n = 96;
    for (ItemDecision it : d.items()) {
      n += 96 + it.rule().length() + it.key().length() + 150 * it.windows().size();
    }
    return n;
  }

  private static void write(JsonGenerator g, Decision d, boolean explained) throws IOException {
    g.writeFieldName(ALLOWED);
    g.writeBoolean(d.allowed());
    g.writeFieldName(RETRY_AFTER_MS);
    g.writeNumber(d.retryAfterMs());
    g.writeFieldName(WAIT_MS);
    g.writeNumber(d.waitMs());
    if (explained && d.degraded()) {
      g.writeFieldName(DEGRADED);
      g.writeBoolean(true);
    }
    g.writeFieldName(ITEMS);
    g.writeStartArray();
    List<ItemDecision> items = d.items();
    for (int i = 0; i < items.size(); i++) {
      ItemDecision it = items.get(i);
      g.writeStartObject();
      g.writeFieldName(RULE);
      g.writeString(it.rule());
      g.writeFieldName(KEY);
      g.writeString(it.key());
      g.writeFieldName(COST);
      g.writeNumber(it.cost());
      if (explained && it.reason() != DenyReason.NONE) {
        g.writeFieldName(REASON);
        g.writeString(REASONS[it.reason().ordinal()]);
      }
      if (explained && it.shadow()) {
        g.writeFieldName(SHADOW);
        g.writeBoolean(true);
      }
      if (explained && it.blockedMs() != 0) {
        g.writeFieldName(BLOCKED_MS);
        g.writeNumber(it.blockedMs());
      }
      if (explained && it.leased()) {
        g.writeFieldName(LEASED);
        g.writeBoolean(true);
      }
      if (explained && it.waitMs() != 0) {
        // A shaping item's own wait: the request's waitMs leaves out a shadow item's, which a
        // client of the API (sluice-client) reports per item as the library does.
        g.writeFieldName(WAIT_MS);
        g.writeNumber(it.waitMs());
      }
      g.writeFieldName(WINDOWS);
      g.writeStartArray();
      List<WindowState> ws = it.windows();
      for (int j = 0; j < ws.size(); j++) {
        WindowState w = ws.get(j);
        g.writeStartObject();
        g.writeFieldName(LIMIT);
        g.writeNumber(w.limit());
        g.writeFieldName(PERIOD_MS);
        g.writeNumber(w.periodMs());
        g.writeFieldName(REMAINING);
        g.writeNumber(w.remaining());
        g.writeFieldName(RETRY_AFTER_MS);
        g.writeNumber(w.retryAfterMs());
        g.writeFieldName(RESET_AFTER_MS);
        g.writeNumber(w.resetAfterMs());
        g.writeFieldName(EXCEEDED);
        g.writeBoolean(w.exceeded());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  /**
   * JSON's escapes, plus U+2028 and U+2029 (they end lines in JavaScript and some line readers);
   * every other control character as a six-character {@code \\u} escape, backspace and form feed included.
   */
  private static final class Escapes extends CharacterEscapes {
    private static final int[] ASCII = standardAsciiEscapesForJSON();
    private static final SerializedString LS = new SerializedString("\\u2028");
    private static final SerializedString PS = new SerializedString("\\u2029");

    static {
      ASCII['\b'] = ESCAPE_STANDARD;
      ASCII['\f'] = ESCAPE_STANDARD;
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return ASCII;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      return ch == '\u2028' ? LS : ch == '\u2029' ? PS : null;
    }
  }

  private static final class Bytes extends ByteArrayOutputStream {
    Bytes(int size) {
      super(size);
    }

    HttpData data() {
      return HttpData.wrap(buf, 0, count);
    }
  }

  private static final class Appending extends Writer {
    private final StringBuilder sb;

    Appending(StringBuilder sb) {
      this.sb = sb;
    }

    @Override
    public void write(char[] c, int off, int len) {
      sb.append(c, off, len);
    }

    @Override
    public void write(String s, int off, int len) {
      sb.append(s, off, off + len);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
