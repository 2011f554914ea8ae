package dev.sluice.server.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import dev.sluice.Item;
import dev.sluice.OperationRequest;
import dev.sluice.Request;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads a trace: JSON objects, one per line, {@code {"t":ms,"rule":"…","key":"…","cost":1}},
 * {@code {"t":ms,"items":[{"rule","key","cost"},…]}} or
 * {@code {"t":ms,"operation":"…","attributes":{"name":"value",…},"cost":1}}; cost defaults to 1
 * (for an operation, it multiplies the costs the operation defines). One streaming parser
 * reads the whole input (no per-line parser or string), which is what makes million-line traces
 * quick. Any mistake stops the replay with the line it is on.
 */
final class TraceReader {
  private static final JsonFactory FACTORY = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();
  private static final String FIELDS = "t, rule, key, cost, items, operation, attributes";
  private static final long MAX_T = Long.MAX_VALUE / 1000;
  /** Jackson's "[Source: …; line: 1, column: 1]" inside a message. */
  private static final Pattern SOURCE = Pattern.compile("\\[Source: [^;]*; line: (\\d+), column: (\\d+)]");

  private final String name;
  /** The line of the object being read, 0 between objects. */
  private long objectLine;

  /** @param name the trace's name in messages: its file, or {@code <stdin>} */
  TraceReader(String name) {
    this.name = name;
  }

  void read(InputStream in, TraceSink sink) {
    try (JsonParser p = FACTORY.createParser(in)) {
      JsonToken token;
      while ((token = p.nextToken()) != null) {
        long line = p.currentTokenLocation().getLineNr();
        if (token != JsonToken.START_OBJECT) {
          throw fail(line, "expected a JSON object such as {\"t\":0,\"rule\":\"…\",\"key\":\"…\"}, found "
              + shown(p, token));
        }
        objectLine = line;
        readRequest(p, line, sink);
        objectLine = 0;
      }
    } catch (StreamReadException e) {
      // A line cut short is only noticed on the next line or at the end of input: blame the line
      // where the object began.
      JsonLocation l = e.getLocation();
      long line = objectLine > 0 ? objectLine : l == null ? 0 : l.getLineNr();
      throw fail(line, "not valid JSON: " + jacksonMessage(e));
    } catch (IOException e) {
      throw new CliException("cannot read the trace " + name + ": " + e.getMessage());
    }
  }

  private void readRequest(JsonParser p, long line, TraceSink sink) throws IOException {
    long t = -1;
    String rule = null;
    String key = null;
    long cost = 1;
    boolean hasCost = false;
    List<Item> items = null;
    String operation = null;
    Map<String, String> attributes = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      switch (field) {
        case "t" -> t = whole(p, v, line, "t", MAX_T, "milliseconds ");
        case "rule" -> rule = string(p, v, line, "rule");
        case "key" -> key = string(p, v, line, "key");
        case "cost" -> {
          cost = whole(p, v, line, "cost", Long.MAX_VALUE, "");
          hasCost = true;
        }
        case "items" -> items = items(p, v, line);
        case "operation" -> operation = string(p, v, line, "operation");
        case "attributes" -> attributes = attributes(p, v, line);
        default -> throw fail(line, "unknown field '" + field + "' (expected one of: " + FIELDS + ")");
      }
    }
    if (t < 0) {
      throw fail(line, "missing 't' (milliseconds on the trace's clock)");
    }
    if (operation != null || attributes != null) {
      if (operation == null) {
        throw fail(line, "'attributes' belong to an 'operation', which the line does not name");
      }
      if (rule != null || key != null || items != null) {
        throw fail(line, "give one of: rule and key, items, or operation and attributes");
      }
      OperationRequest request;
      try {
        request = new OperationRequest(operation, attributes == null ? Map.of() : attributes, cost,
            Request.STORE_CLOCK);
      } catch (IllegalArgumentException e) {
        throw fail(line, e.getMessage());
      }
      sink.accept(t, request, line);
      return;
    }
    if (items != null) {
      if (rule != null || key != null || hasCost) {
        throw fail(line, "give either rule, key and cost, or items, not both");
      }
    } else {
      if (rule == null || key == null) {
        throw fail(line, "missing '" + (rule == null ? "rule" : "key") + "' (or give 'items')");
      }
      items = List.of(new Item(rule, key, cost));
    }
    sink.accept(t, items, line);
  }

  private List<Item> items(JsonParser p, JsonToken v, long line) throws IOException {
    if (v != JsonToken.START_ARRAY) {
      throw fail(line, "items must be a list of {\"rule\",\"key\",\"cost\"}, found " + shown(p, v));
    }
    List<Item> items = new ArrayList<>(4);
    JsonToken token;
    while ((token = p.nextToken()) != JsonToken.END_ARRAY) {
      if (token != JsonToken.START_OBJECT) {
        throw fail(line, "each item must be an object {\"rule\",\"key\",\"cost\"}, found " + shown(p, token));
      }
      String rule = null;
      String key = null;
      long cost = 1;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken fv = p.nextToken();
        switch (field) {
          case "rule" -> rule = string(p, fv, line, "rule");
          case "key" -> key = string(p, fv, line, "key");
          case "cost" -> cost = whole(p, fv, line, "cost", Long.MAX_VALUE, "");
          default -> throw fail(line, "unknown item field '" + field + "' (expected one of: rule, key, cost)");
        }
      }
      if (rule == null || key == null) {
        throw fail(line, "item " + (items.size() + 1) + " has no '" + (rule == null ? "rule" : "key") + "'");
      }
      items.add(new Item(rule, key, cost));
    }
    if (items.isEmpty()) {
      throw fail(line, "items must not be empty");
    }
    return items;
  }

  /** {@code {"name": "value", ...}}: string values, at most {@link OperationRequest#MAX_ATTRIBUTES}. */
  private Map<String, String> attributes(JsonParser p, JsonToken v, long line) throws IOException {
    if (v != JsonToken.START_OBJECT) {
      throw fail(line, "attributes must be an object of names to strings, found " + shown(p, v));
    }
    Map<String, String> out = new LinkedHashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken fv = p.nextToken();
      if (fv != JsonToken.VALUE_STRING) {
        throw fail(line, "attribute '" + name + "' must be a string, found " + shown(p, fv));
      }
      if (out.size() == OperationRequest.MAX_ATTRIBUTES) {
        throw fail(line, "a request may carry at most " + OperationRequest.MAX_ATTRIBUTES + " attributes");
      }
      out.put(name, p.getText());
    }
    return out;
  }

  private String string(JsonParser p, JsonToken v, long line, String field) throws IOException {
    if (v != JsonToken.VALUE_STRING) {
      throw fail(line, field + " must be a string, found " + shown(p, v));
    }
    return p.getText();
  }

  private long whole(JsonParser p, JsonToken v, long line, String field, long max, String unit) throws IOException {
    if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      throw fail(line, field + " must be a whole number of " + unit + "≥ 0, found " + shown(p, v));
    }
    long n = p.getLongValue();
    if (n < 0 || n > max) {
      throw fail(line, field + " must be a whole number of " + unit + "≥ 0" + (max < Long.MAX_VALUE ? " and ≤ " + max
          : "") + ", found " + n);
    }
    return n;
  }

  private static String jacksonMessage(StreamReadException e) {
    String message = e.getOriginalMessage();
    int nl = message.indexOf('\n');
    if (nl >= 0) {
      message = message.substring(0, nl);
    }
    return SOURCE.matcher(message).replaceAll("line $1, column $2");
  }

  private static String shown(JsonParser p, JsonToken token) throws IOException {
    return switch (token) {
      case START_OBJECT -> "an object";
      case START_ARRAY -> "a list";
      case VALUE_STRING -> "\"" + p.getText() + "\"";
      default -> p.getText();
    };
  }

  CliException fail(long line, String message) {
    return new CliException(name + ":" + line + ": " + message);
  }
}
