package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import dev.sluice.InvalidAttributeException;
import dev.sluice.Item;
import dev.sluice.OperationRequest;
import dev.sluice.Request;
import java.io.CharConversionException;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the JSON bodies of the HTTP API strictly: the fields named in the API and nothing else,
 * each of its type; every mistake is an {@link ApiException} whose message says what was wrong.
 * Whether a rule is in force and a key one the limiter keeps is the limiter's to say: the API
 * answers its exceptions ({@code HttpApi}).
 */
final class RequestJson {
  static final int MAX_ITEMS = 100;
  private static final Set<String> ITEM_FIELDS = Set.of("rule", "key", "cost");
  private static final Set<String> TIMED_ITEM_FIELDS = Set.of("rule", "key", "cost", "atMicros");
  /**
   * The latest explicit time a trusting service takes: 9999-12-31T23:59:59.999999Z, so that any
   * time a store computes from it stays far from overflow.
   */
  static final long MAX_AT_MICROS = 253_402_300_799_999_999L;
  private static final StreamReadConstraints LIMITS = StreamReadConstraints.builder().maxNestingDepth(32)
      .maxNumberLength(64).maxStringLength(1 << 20).build();
  /** For bodies in the plain shape: it tracks duplicates of the few fields it knows itself. */
  private static final JsonFactory PLAIN = JsonFactory.builder().streamReadConstraints(LIMITS).build();
  private static final ObjectMapper JSON = new ObjectMapper(JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .streamReadConstraints(LIMITS)
      .build())
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_INTEGER_FOR_INTS);

  /**
   * An acquire body read: its request, and whether its items came as a list ({@code "items"});
   * or, for a body by operation, the operation request (and {@code request} null).
   */
  record Acquire(Request request, boolean listed, OperationRequest operation) {
    Acquire(Request request, boolean listed) {
      this(request, listed, null);
    }
  }

  /** How a request gave its items, which decides how errors name the field at fault. */
  enum Shape { SINGLE, LISTED, OPERATION }

  private static final Set<String> OPERATION_FIELDS = Set.of("operation", "attributes", "cost");

  /**
   * Whether {@code "atMicros"} is honoured. A caller who picks the time of its own decisions can
   * move a key's windows forward at will and be admitted again at once, so only a service started
   * for replay or tests trusts it ({@code --trust-request-time}); any other refuses the field.
   */
  private final boolean trustRequestTime;

  RequestJson() {
    this(false);
  }

  RequestJson(boolean trustRequestTime) {
    this.trustRequestTime = trustRequestTime;
  }

  /** A JSON object from {@code body}. */
  static JsonNode object(byte[] body) throws ApiException {
    if (body.length == 0) {
      throw ApiException.badRequest("malformed_json", "the request body is empty; expected a JSON object");
    }
    JsonNode n;
    JsonParser p = null;
    try {
      p = JSON.getFactory().createParser(body);
      n = JSON.readTree(p);
      p.close();
    } catch (JsonProcessingException e) {
      throw malformed(e, p);
    } catch (IOException | RuntimeException e) {
      throw ApiException.badRequest("malformed_json", "the request body is not valid JSON");
    }
    if (n == null || !n.isObject()) {
      throw ApiException.badRequest("invalid_request",
          "the request body must be a JSON object, was " + (n == null ? "empty" : typeName(n)));
    }
    return n;
  }

  /**
   * What is wrong with a body the JSON parser refused, in the API's words: the parser's own
   * messages name its classes and settings ({@code StreamReadConstraints.getMaxNumberLength()},
   * {@code JsonNode}), which mean nothing to a client. The kind of mistake is told from the
   * exception's type, and for the few kinds that share one, from its message.
   */
  static ApiException malformed(JsonProcessingException e, JsonParser p) {
    String m = String.valueOf(e.getOriginalMessage());
    String at = at(e.getLocation() != null ? e.getLocation() : p == null ? null : p.currentLocation());
    if (m.contains("Invalid UTF-8") || m.contains("Invalid UTF-32") || e.getCause() instanceof CharConversionException) {
      return ApiException.badRequest("malformed_json", "the request body is not valid UTF-8" + at);
    }
    String field = currentField(p);
    String in = field == null ? "" : " in '" + clip(field) + "'";
    String what;
    if (e instanceof StreamConstraintsException) {
      if (m.startsWith("Number")) {
        what = "a number" + in + " has more than " + LIMITS.getMaxNumberLength() + " characters";
      } else if (m.contains("nesting depth")) {
        what = "values are nested more than " + LIMITS.getMaxNestingDepth() + " deep";
      } else if (m.startsWith("String")) {
        what = "a string" + in + " is longer than " + LIMITS.getMaxStringLength() + " characters";
      } else {
        what = "it is larger than the API reads";
      }
    } else if (e instanceof JsonEOFException) {
      what = "it ends before the JSON value does";
    } else if (e instanceof MismatchedInputException || m.startsWith("Unexpected close marker")) {
      // Read as a tree, one value is the whole body: anything after it is this mistake.
      what = "more data follows the JSON value";
    } else if (m.startsWith("Duplicate field")) {
      what = "field '" + clip(quoted(m)) + "' appears twice";
    } else {
      what = "unexpected input";
    }
    return ApiException.badRequest("malformed_json", "the request body is not valid JSON: " + what + at);
  }

  /** " (line L, column C)" of the mistake, when the parser knows it. */
  private static String at(JsonLocation l) {
    return l == null || l.getLineNr() < 1 ? "" : " (line " + l.getLineNr() + ", column " + l.getColumnNr() + ")";
  }

  /** The name of the field whose value the parser was reading, if any. */
  private static String currentField(JsonParser p) {
    try {
      return p == null ? null : p.currentName();
    } catch (IOException | RuntimeException ignored) {
      return null;
    }
  }

  /** The text between the first and the last {@code '} of {@code m}. */
  private static String quoted(String m) {
    int a = m.indexOf('\'');
    int b = m.lastIndexOf('\'');
    return a >= 0 && b > a ? m.substring(a + 1, b) : "?";
  }

  /**
   * An acquire request: {@code {"rule","key","cost"}} or {@code {"items":[{"rule","key","cost"},
   * ...]}} ({@code cost} defaults to 1).
   *
   * <p>A body in this plain shape is read in one pass over its tokens. Any other body is read
   * again as a tree, which names what is wrong with it; both readers accept exactly the same
   * bodies.
   */
  Acquire acquire(byte[] body) throws ApiException {
    Plain plain = plain(body);
    if (plain == null) {
      return acquireTree(body);
    }
    return new Acquire(Request.of(plain.items), plain.listed);
  }

  /** The items of a plain body; {@code listed} if they came as {@code "items"}. */
  private record Plain(List<Item> items, boolean listed) {}

  /**
   * A body in the plain shape: each field of its type, no field twice, costs that fit a long;
   * null for any other body, however slightly different.
   */
  private static Plain plain(byte[] body) {
    try (JsonParser p = PLAIN.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      String first = p.nextFieldName();
      List<Item> items;
      boolean listed = "items".equals(first);
      if (listed) {
        if (p.nextToken() != JsonToken.START_ARRAY) {
          return null;
        }
        items = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.START_OBJECT) {
          Item it = plainItem(p, p.nextFieldName());
          if (it == null || items.size() == MAX_ITEMS) {
            return null;
          }
          items.add(it);
        }
        if (t != JsonToken.END_ARRAY || items.isEmpty() || p.nextToken() != JsonToken.END_OBJECT) {
          return null;
        }
      } else {
        Item it = plainItem(p, first);
        if (it == null) {
          return null;
        }
        items = List.of(it);
      }
      return p.nextToken() == null ? new Plain(items, listed) : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The item whose first field name {@code first} was just read; null if not plain. */
  private static Item plainItem(JsonParser p, String first) throws IOException {
    String rule = null;
    String key = null;
    long cost = -1;
    for (String f = first; f != null; f = p.nextFieldName()) {
      JsonToken v = p.nextToken();
      switch (f) {
        case "rule" -> {
          if (rule != null || v != JsonToken.VALUE_STRING) {
            return null;
          }
          rule = p.getText();
        }
        case "key" -> {
          if (key != null || v != JsonToken.VALUE_STRING) {
            return null;
          }
          key = p.getText();
        }
        case "cost" -> {
          if (cost >= 0 || v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            return null;
          }
          cost = p.getLongValue();
          if (cost < 0) {
            return null;
          }
        }
        default -> {
          return null;
        }
      }
    }
    if (p.currentToken() != JsonToken.END_OBJECT || rule == null || key == null) {
      return null;
    }
    return new Item(rule, key, cost < 0 ? 1 : cost);
  }

  /** The reference reader: the body as a tree, every mistake named. */
  Acquire acquireTree(byte[] body) throws ApiException {
    JsonNode root = object(body);
    if (root.has("operation")) {
      return new Acquire(null, false, operation(root));
    }
    long at = requestTime(root);
    List<Item> items = new ArrayList<>();
    if (root.has("items")) {
      if (root.size() != (at == Request.STORE_CLOCK ? 1 : 2)) {
        throw ApiException.badRequest("invalid_request",
            "a request has either 'items' or 'rule', 'key' and 'cost' at the top, not both");
      }
      JsonNode list = root.get("items");
      if (!list.isArray()) {
        throw ApiException.badRequest("invalid_request", "'items' must be an array, was " + typeName(list));
      }
      if (list.isEmpty()) {
        throw ApiException.badRequest("invalid_request", "'items' must hold at least one item");
      }
      if (list.size() > MAX_ITEMS) {
        throw ApiException.badRequest("invalid_request",
            "'items' holds " + list.size() + " items; the maximum is " + MAX_ITEMS);
      }
      for (int i = 0; i < list.size(); i++) {
        JsonNode it = list.get(i);
        if (!it.isObject()) {
          throw ApiException.badRequest("invalid_request", "items[" + i + "] must be an object, was " + typeName(it));
        }
        items.add(item(it, "items[" + i + "]."));
      }
      return new Acquire(timed(Request.of(items), at), true);
    }
    onlyFields(root, "", at == Request.STORE_CLOCK ? ITEM_FIELDS : TIMED_ITEM_FIELDS);
    items.add(item(root, ""));
    return new Acquire(timed(Request.of(items), at), false);
  }

  private static Request timed(Request r, long atMicros) {
    return atMicros == Request.STORE_CLOCK ? r : r.atMicros(atMicros);
  }

  /**
   * The body's {@code "atMicros"}, microseconds since the Unix epoch, or {@link Request#STORE_CLOCK}
   * without one; refused unless this service trusts request times.
   */
  private long requestTime(JsonNode root) throws ApiException {
    JsonNode t = root.get("atMicros");
    if (t == null) {
      return Request.STORE_CLOCK;
    }
    if (!trustRequestTime) {
      throw ApiException.badRequest("invalid_request", "'atMicros' is honoured only by a service started with "
          + "--trust-request-time (for replay and tests); leave it out to be decided on the store's clock");
    }
    if (!t.isIntegralNumber() || !t.canConvertToLong() || t.longValue() < 0 || t.longValue() > MAX_AT_MICROS) {
      throw ApiException.badRequest("invalid_request", "'atMicros' must be an integer from 0 to " + MAX_AT_MICROS
          + " (microseconds since the Unix epoch), was " + typeName(t) + (t.isNumber() ? " " + clip(t.asText()) : ""));
    }
    return t.longValue();
  }

  /**
   * {@code {"operation": "...", "attributes": {"name": "value", ...}, "cost": n}}: attributes are
   * optional (an operation may need none), their values strings; cost defaults to 1.
   */
  private static OperationRequest operation(JsonNode root) throws ApiException {
    onlyFields(root, "", OPERATION_FIELDS);
    String name = string(root, "", "operation");
    Map<String, String> attributes = new LinkedHashMap<>();
    JsonNode attrs = root.get("attributes");
    if (attrs != null && !attrs.isNull()) {
      if (!attrs.isObject()) {
        throw ApiException.badRequest("invalid_attribute", "'attributes' must be an object of names to strings, was "
            + typeName(attrs));
      }
      if (attrs.size() > OperationRequest.MAX_ATTRIBUTES) {
        throw ApiException.badRequest("invalid_attribute", "'attributes' holds " + attrs.size()
            + " attributes; the maximum is " + OperationRequest.MAX_ATTRIBUTES);
      }
      for (Map.Entry<String, JsonNode> e : attrs.properties()) {
        JsonNode v = e.getValue();
        if (!v.isTextual()) {
          throw ApiException.badRequest("invalid_attribute", "'attributes." + clip(e.getKey())
              + "' must be a string, was " + typeName(v) + " (leave an attribute out when it has no value)");
        }
        attributes.put(e.getKey(), v.textValue());
      }
    }
    long cost = cost(root.get("cost"), "");
    try {
      return new OperationRequest(name, attributes, cost, Request.STORE_CLOCK);
    } catch (InvalidAttributeException e) {
      throw invalidAttribute(e);
    }
  }

  /** The API's error for an attribute the limiter refused, naming its field. */
  static ApiException invalidAttribute(InvalidAttributeException e) {
    return ApiException.badRequest("invalid_attribute", e.attribute() == null
        ? "'attributes': " + e.problem()
        : "'attributes." + clip(e.attribute()) + "' " + e.problem());
  }

  private static Item item(JsonNode n, String at) throws ApiException {
    if (!at.isEmpty()) {
      onlyFields(n, at, ITEM_FIELDS);
    }
    String rule = string(n, at, "rule");
    String key = string(n, at, "key");
    return new Item(rule, key, cost(n.get("cost"), at));
  }

  /** A cost field: a non-negative integer that fits a long; 1 if absent. */
  private static long cost(JsonNode c, String at) throws ApiException {
    long cost = 1;
    if (c != null) {
      if (!c.isIntegralNumber()) {
        throw ApiException.badRequest("invalid_cost", "'" + at + "cost' must be a non-negative integer, was " + typeName(c)
            + (c.isNumber() ? " " + c.asText() : ""));
      }
      // The API's cost is a non-negative integer that fits a long: the JSON number's type.
      BigInteger v = c.bigIntegerValue();
      if (v.signum() < 0) {
        throw ApiException.badRequest("invalid_cost", "'" + at + "cost' must be >= 0, was " + v);
      }
      if (v.bitLength() > 63) {
        throw ApiException.badRequest("invalid_cost", "'" + at + "cost' must be at most " + Long.MAX_VALUE + ", was " + v);
      }
      cost = v.longValue();
    }
    return cost;
  }

  /** {@code {"rule","key"}} for a reset. */
  Item ruleAndKey(byte[] body) throws ApiException {
    JsonNode root = object(body);
    onlyFields(root, "", Set.of("rule", "key"));
    String rule = string(root, "", "rule");
    String key = string(root, "", "key");
    return new Item(rule, key, 0);
  }

  static void onlyFields(JsonNode n, String at, Set<String> allowed) throws ApiException {
    for (java.util.Map.Entry<String, JsonNode> e : n.properties()) {
      String f = e.getKey();
      if (!allowed.contains(f)) {
        throw ApiException.badRequest("invalid_request", "unknown field '" + at + clip(f) + "'; expected "
            + String.join(", ", allowed.stream().sorted().toList()));
      }
    }
  }

  private static String string(JsonNode n, String at, String field) throws ApiException {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      throw ApiException.badRequest("invalid_request", "'" + at + field + "' is required");
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest("invalid_request", "'" + at + field + "' must be a string, was " + typeName(v));
    }
    return v.textValue();
  }

  static String typeName(JsonNode n) {
    JsonNodeType t = n.getNodeType();
    return switch (t) {
      case ARRAY -> "an array";
      case OBJECT -> "an object";
      case STRING -> "a string";
      case NUMBER -> n.isIntegralNumber() ? "an integer" : "a decimal number";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      default -> t.name().toLowerCase(java.util.Locale.ROOT);
    };
  }

  /** Echoes user input in messages without letting it grow them without bound. */
  static String clip(String s) {
    return s.length() <= 128 ? s : s.substring(0, 128) + "...";
  }
}
