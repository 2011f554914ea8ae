package dev.sluice.config.yaml;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads YAML into {@link Node}s with the line and column of every key and value. Jackson's
 * streaming parser is used rather than a tree model because the tree model forgets locations.
 * One document per file; a key repeated in a mapping and an alias ({@code *name}) are errors
 * rather than read one way or another.
 */
public final class YamlTree {
  private static final YAMLFactory FACTORY = new YAMLFactory();
  /**
   * The deepest nesting read. A configuration needs a few levels (an Envoy file a few per level
   * of descriptors); the parser itself sets no bound, and every level costs a stack frame here.
   */
  public static final int MAX_DEPTH = 64;

  private final String file;
  private final List<ConfigProblem> errors;
  private YAMLParser parser;

  private YamlTree(String file, List<ConfigProblem> errors) {
    this.file = file;
    this.errors = errors;
  }

  /**
   * The document's root, or null if the source is empty (only comments).
   *
   * @param file the file's name in problems
   * @throws ConfigException naming the place of every problem: not YAML, a second document, a key
   *     repeated in a mapping, an alias
   */
  public static Node read(String source, String file) throws ConfigException {
    List<ConfigProblem> errors = new ArrayList<>();
    Node root = parse(source, file, errors);
    if (!errors.isEmpty()) {
      throw new ConfigException(errors);
    }
    return root;
  }

  /**
   * The document's root, or null if the source is empty (only comments) or not YAML; problems
   * are added to {@code errors}.
   */
  public static Node parse(String source, String file, List<ConfigProblem> errors) {
    return new YamlTree(file, errors).parse(source);
  }

  /** The keys of the root mapping, in order; empty if the root is not a mapping. */
  public static List<String> topLevelKeys(String source, String file) throws ConfigException {
    List<String> keys = new ArrayList<>();
    try (JsonParser p = FACTORY.createParser(stripBom(source))) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return keys;
      }
      JsonToken t;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        keys.add(p.currentName());
        skipValue(p, file);
      }
      return keys;
    } catch (StreamReadException e) {
      throw new ConfigException(syntaxProblem(file, e));
    } catch (IOException e) {
      throw new ConfigException(ConfigProblem.at(ConfigLocation.of(file), "cannot read: " + e.getMessage()));
    }
  }

  /**
   * Skips the value after a key of the root mapping, refusing at its place a value nested more
   * than {@link #MAX_DEPTH} deep, as {@link #read} does. The parser's own skipping would go on
   * to its own bound (1,000 levels) and fail there in its words, without a place.
   */
  private static void skipValue(JsonParser p, String file) throws IOException, ConfigException {
    int depth = 1;
    JsonToken t = p.nextToken();
    if (t != JsonToken.START_OBJECT && t != JsonToken.START_ARRAY) {
      return;
    }
    int open = 1;
    while (open > 0) {
      t = p.nextToken();
      if (t == null) {
        return;
      }
      if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
        open++;
        if (depth + open > MAX_DEPTH) {
          JsonLocation l = p.currentTokenLocation();
          throw new ConfigException(new ConfigProblem(file, l.getLineNr(), l.getColumnNr(),
              tooDeep()));
        }
      } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
        open--;
      }
    }
  }

  private static String tooDeep() {
    return "values are nested more than " + MAX_DEPTH + " deep";
  }

  public static String stripBom(String source) {
    return source.startsWith("\uFEFF") ? source.substring(1) : source;
  }

  private Node parse(String source) {
    try (YAMLParser p = (YAMLParser) FACTORY.createParser(stripBom(source))) {
      parser = p;
      JsonToken first = p.nextToken();
      if (first == null) {
        return null;
      }
      Node root = read(first, 1);
      if (p.nextToken() != null) {
        error(here(), "a file may hold only one YAML document; found a second one ('---')");
      }
      return root;
    } catch (TooDeep e) {
      return null;
    } catch (StreamReadException e) {
      errors.add(syntaxProblem(file, e));
      return null;
    } catch (IOException e) {
      errors.add(ConfigProblem.at(ConfigLocation.of(file), "cannot read: " + plainMessage(e.getMessage())));
      return null;
    }
  }

  /** Ends the reading of a file nested too deep; its problem is already recorded. */
  private static final class TooDeep extends RuntimeException {
    TooDeep() {
      super(null, null, false, false);
    }
  }

  private ConfigLocation here() {
    JsonLocation l = parser.currentTokenLocation();
    return new ConfigLocation(file, l.getLineNr(), l.getColumnNr());
  }

  private void error(ConfigLocation at, String message) {
    errors.add(ConfigProblem.at(at, message));
  }

  private Node read(JsonToken t, int depth) throws IOException {
    ConfigLocation at = here();
    if (depth > MAX_DEPTH && (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)) {
      error(at, tooDeep());
      // Not skipped: skipping what is nested deeper still would run into the parser's own depth
      // limit and report the same problem again, in its words. The rest of the file goes unread.
      throw new TooDeep();
    }
    switch (t) {
      case START_OBJECT:
        return readMap(at, depth);
      case START_ARRAY:
        List<Node> items = new ArrayList<>();
        JsonToken next;
        while ((next = parser.nextToken()) != JsonToken.END_ARRAY) {
          items.add(read(next, depth + 1));
        }
        return new ListNode(at, items);
      default:
        return readScalar(t, at);
    }
  }

  private MapNode readMap(ConfigLocation at, int depth) throws IOException {
    MapNode map = new MapNode(at);
    JsonToken t;
    while ((t = parser.nextToken()) == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      ConfigLocation keyAt = here();
      Node value = read(parser.nextToken(), depth + 1);
      Field first = map.fields.get(name);
      if (first != null) {
        // YAML forbids duplicate keys; silently keeping one of them would hide a mistake.
        error(keyAt, "duplicate field '" + name + "' (first at line " + first.at().line() + ", column "
            + first.at().column() + ")");
      } else {
        map.fields.put(name, new Field(name, keyAt, value));
      }
    }
    if (t != JsonToken.END_OBJECT) {
      throw new IllegalStateException("unexpected " + t + " in a mapping at " + here());
    }
    return map;
  }

  private ScalarNode readScalar(JsonToken t, ConfigLocation at) throws IOException {
    if (parser.isCurrentAlias()) {
      // Jackson reports an alias as a string holding the anchor's name, which would silently
      // turn "limit: *big" into a type error far from its cause; say what it is instead.
      error(at, "YAML aliases (*" + parser.getText() + ") are not supported; write the value out");
      return new ScalarNode(at, JsonToken.VALUE_NULL, "", null);
    }
    String text = parser.getText();
    BigDecimal number = null;
    if (t == JsonToken.VALUE_NUMBER_INT) {
      number = new BigDecimal(parser.getBigIntegerValue());
    } else if (t == JsonToken.VALUE_NUMBER_FLOAT) {
      try {
        number = parser.getDecimalValue();
      } catch (NumberFormatException | StreamReadException e) {
        number = null; // .inf, .nan
      }
    }
    return new ScalarNode(at, t, text, number);
  }

  /**
   * The parser's message in the loader's words: its first line, without the names of the
   * parser's classes, which some messages quote ("got this instead: <org.yaml...Event(...)>").
   */
  static String plainMessage(String message) {
    if (message == null) {
      return "the text cannot be read";
    }
    if (message.startsWith("Expected a field name")) {
      return "a mapping key must be a plain value (a string or a number), not a list or a mapping";
    }
    int nl = message.indexOf('\n');
    String first = nl >= 0 ? message.substring(0, nl).strip() : message;
    return first.contains("org.yaml.") || first.contains("com.fasterxml.") || first.contains("java.")
        ? "the text cannot be read as YAML here" : first;
  }

  static ConfigProblem syntaxProblem(String file, StreamReadException e) {
    // SnakeYAML knows the place of the problem itself; Jackson's location is sometimes that of
    // the enclosing construct. Its message repeats the place and quotes the source over several
    // lines: keep the context and the problem.
    if (e.getCause() instanceof MarkedYAMLException m && m.getProblemMark() != null) {
      String text = m.getContext() == null ? m.getProblem() : m.getContext() + ": " + m.getProblem();
      return new ConfigProblem(file, m.getProblemMark().getLine() + 1, m.getProblemMark().getColumn() + 1,
          "not valid YAML: " + plainMessage(text));
    }
    JsonLocation l = e.getLocation();
    String text = "not valid YAML: " + plainMessage(e.getOriginalMessage());
    if (l == null || l.getLineNr() < 1) {
      return ConfigProblem.at(ConfigLocation.of(file), text);
    }
    return new ConfigProblem(file, l.getLineNr(), l.getColumnNr(), text);
  }
}
