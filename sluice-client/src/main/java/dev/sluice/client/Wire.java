package dev.sluice.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.DenyReason;
import dev.sluice.InvalidCostException;
import dev.sluice.InvalidKeyException;
import dev.sluice.ItemDecision;
import dev.sluice.StoreException;
import dev.sluice.UnknownRuleException;
import dev.sluice.WindowState;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The service's HTTP JSON API as the client speaks it: the body of {@code POST /v1/acquire} for a
 * batch, and its answers read back into the store's item decisions or the library's exceptions.
 */
final class Wire {
  private static final JsonFactory JSON = JsonFactory.builder().build();

  private Wire() {}

  /** {@code {"items":[{"rule","key","cost"},...]}}, with {@code "atMicros"} for a batch at an explicit time. */
  static byte[] acquire(Batch batch) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 64 * batch.items().size());
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeArrayFieldStart("items");
      for (ResolvedItem it : batch.items()) {
        g.writeStartObject();
        g.writeStringField("rule", it.rule().name());
        g.writeStringField("key", it.key());
        g.writeNumberField("cost", it.cost());
        g.writeEndObject();
      }
      g.writeEndArray();
      if (batch.hasExplicitTime()) {
        g.writeNumberField("atMicros", batch.timeMicros());
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** {@code {"rule","key"}}. */
  static byte[] reset(String rule, String key) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("rule", rule);
      g.writeStringField("key", key);
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /**
   * The decisions of an answer to {@code POST /v1/acquire} of {@code batch}: one per item, in
   * order, from a 200 or 429. Any other status fails as {@link #failure} says; an answer decided
   * by the service's failure modes is an outage here, so that the client's decide and say so.
   */
  static List<ItemDecision> decisions(int status, byte[] body, Batch batch, String instance) {
    if (status != 200 && status != 429) {
      throw failure(status, body, batch, instance);
    }
    try (JsonParser p = JSON.createParser(body)) {
      List<ItemDecision> out = new ArrayList<>(batch.items().size());
      expect(p.nextToken(), JsonToken.START_OBJECT);
      for (String f = p.nextFieldName(); f != null; f = p.nextFieldName()) {
        JsonToken t = p.nextToken();
        switch (f) {
          case "degraded" -> {
            if (t == JsonToken.VALUE_TRUE) {
              throw new ServiceUnavailableException(instance + " could not reach its store and answered by its "
                  + "rules' failure modes");
            }
          }
          case "items" -> {
            expect(t, JsonToken.START_ARRAY);
            while (p.nextToken() == JsonToken.START_OBJECT) {
              out.add(item(p));
            }
          }
          default -> p.skipChildren();
        }
      }
      if (out.size() != batch.items().size()) {
        throw new StoreException(instance + " answered " + out.size() + " items for a request of "
            + batch.items().size());
      }
      return out;
    } catch (IOException e) {
      throw new ServiceUnavailableException(instance + " sent an answer that is not the API's JSON", e);
    }
  }

  private static ItemDecision item(JsonParser p) throws IOException {
    String rule = null;
    String key = null;
    long cost = 0;
    DenyReason reason = DenyReason.NONE;
    boolean shadow = false;
    boolean leased = false;
    long blockedMs = 0;
    long waitMs = 0;
    List<WindowState> windows = new ArrayList<>(2);
    for (String f = p.nextFieldName(); f != null; f = p.nextFieldName()) {
      JsonToken t = p.nextToken();
      switch (f) {
        case "rule" -> rule = p.getText();
        case "key" -> key = p.getText();
        case "cost" -> cost = p.getLongValue();
        case "reason" -> reason = reason(p.getText());
        case "shadow" -> shadow = t == JsonToken.VALUE_TRUE;
        case "leased" -> leased = t == JsonToken.VALUE_TRUE;
        case "blockedMs" -> blockedMs = p.getLongValue();
        case "waitMs" -> waitMs = p.getLongValue();
        case "windows" -> {
          expect(t, JsonToken.START_ARRAY);
          while (p.nextToken() == JsonToken.START_OBJECT) {
            windows.add(window(p));
          }
        }
        default -> p.skipChildren();
      }
    }
    if (rule == null || key == null) {
      throw new IOException("an item without its rule or key");
    }
    // The service names the reason of denied items only; an item that fits has none.
    boolean allowed = reason == DenyReason.NONE;
    return new ItemDecision(rule, key, cost, allowed, reason, waitMs, windows, shadow, blockedMs, leased);
  }

  private static DenyReason reason(String wire) throws IOException {
    for (DenyReason r : DenyReason.values()) {
      if (r.wireName().equals(wire)) {
        return r;
      }
    }
    throw new IOException("an unknown reason '" + wire + "'");
  }

  private static WindowState window(JsonParser p) throws IOException {
    long limit = 0;
    long periodMs = 0;
    long remaining = 0;
    long retryAfterMs = 0;
    long resetAfterMs = 0;
    boolean exceeded = false;
    for (String f = p.nextFieldName(); f != null; f = p.nextFieldName()) {
      JsonToken t = p.nextToken();
      switch (f) {
        case "limit" -> limit = p.getLongValue();
        case "periodMs" -> periodMs = p.getLongValue();
        case "remaining" -> remaining = p.getLongValue();
        case "retryAfterMs" -> retryAfterMs = p.getLongValue();
        case "resetAfterMs" -> resetAfterMs = p.getLongValue();
        case "exceeded" -> exceeded = t == JsonToken.VALUE_TRUE;
        default -> p.skipChildren();
      }
    }
    return new WindowState(limit, periodMs, remaining, retryAfterMs, resetAfterMs, exceeded);
  }

  private static void expect(JsonToken t, JsonToken expected) throws IOException {
    if (t != expected) {
      throw new IOException("expected " + expected + ", found " + t);
    }
  }

  /**
   * What an answer other than a decision means: a client mistake (400) is the library's own
   * exception for it, so the caller sees what an embedded limiter would throw; a request the
   * service could not decide for a reason of its own ({@code 503 unavailable}: its store refused
   * it) is a {@link StoreException}, which no failure mode may admit; anything else — over
   * capacity, a server error, a proxy's answer — is an outage.
   */
  static RuntimeException failure(int status, byte[] body, Batch batch, String instance) {
    String code = "";
    String message = "";
    try (JsonParser p = JSON.createParser(body)) {
      if (p.nextToken() == JsonToken.START_OBJECT && "error".equals(p.nextFieldName())
          && p.nextToken() == JsonToken.START_OBJECT) {
        for (String f = p.nextFieldName(); f != null; f = p.nextFieldName()) {
          p.nextToken();
          if (f.equals("code")) {
            code = p.getText();
          } else if (f.equals("message")) {
            message = p.getText();
          } else {
            p.skipChildren();
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      // Not the API's error body (a proxy in between): the status alone speaks.
    }
    if (status == 400) {
      int item = itemIndex(message);
      ResolvedItem it = batch == null || batch.items().isEmpty() ? null
          : batch.items().get(item >= 0 && item < batch.items().size() ? item : 0);
      switch (code) {
        case "unknown_rule" -> {
          return new UnknownRuleException(ruleNamed(message, batch));
        }
        case "invalid_key" -> {
          String problem = message.replaceFirst("^'[^']*' ", "");
          return new InvalidKeyException(it == null ? "?" : it.rule().name(), Math.max(item, 0), -1, problem);
        }
        case "invalid_cost" -> {
          return new InvalidCostException(it == null ? "?" : it.rule().name(), it == null ? 0 : it.cost(), message);
        }
        default -> {
          return new IllegalArgumentException(instance + " refused the request (" + code + "): " + message);
        }
      }
    }
    if (status == 503 && code.equals("unavailable")) {
      return new StoreException(instance + " could not decide the request: " + message);
    }
    if (status == 401 || status == 403) {
      return new StoreException(instance + " refused the request (" + status + " " + code + "): " + message);
    }
    return new ServiceUnavailableException(instance + " answered " + status
        + (code.isEmpty() ? "" : " " + code) + (message.isEmpty() ? "" : ": " + message));
  }

  /** {@code i} of a message naming {@code 'items[i]...'}; -1 if it names none. */
  private static int itemIndex(String message) {
    int a = message.indexOf("'items[");
    int b = a < 0 ? -1 : message.indexOf(']', a);
    if (a < 0 || b < 0) {
      return -1;
    }
    try {
      return Integer.parseInt(message.substring(a + 7, b));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * The rule an {@code unknown_rule} message names, whole: the service clips long names in its
   * messages, so the batch's own name that the message starts with is preferred.
   */
  private static String ruleNamed(String message, Batch batch) {
    int a = message.indexOf('\'');
    int b = message.lastIndexOf('\'');
    String named = a >= 0 && b > a ? message.substring(a + 1, b) : message;
    String stem = named.endsWith("...") ? named.substring(0, named.length() - 3) : named;
    if (batch != null) {
      for (ResolvedItem it : batch.items()) {
        if (it.rule().name().equals(named)) {
          return named;
        }
      }
      for (ResolvedItem it : batch.items()) {
        if (it.rule().name().startsWith(stem)) {
          return it.rule().name();
        }
      }
    }
    return named;
  }
}
