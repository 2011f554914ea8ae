package dev.sluice.server.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLoader;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A YAML document as a tree in which every node remembers where it was written, so that every
 * validation error can name {@code file:line:col}. Duplicate keys are errors, as in the native
 * format.
 */
public final class YamlNode {

  /** What a node holds. */
  public enum Kind { MAP, LIST, SCALAR, NULL }

  private static final YAMLFactory YAML = new YAMLFactory();

  private final Kind kind;
  private final String file;
  private final int line;
  private final int column;
  private final Map<String, YamlNode> map;
  private final List<YamlNode> list;
  private final String text;
  private final JsonToken token;
  private Map<String, JsonLocation> keyWhere = Map.of();

  private YamlNode(Kind kind, String file, JsonLocation at, Map<String, YamlNode> map, List<YamlNode> list,
      String text, JsonToken token) {
    this.kind = kind;
    this.file = file;
    this.line = at.getLineNr();
    this.column = at.getColumnNr();
    this.map = map;
    this.list = list;
    this.text = text;
    this.token = token;
  }

  /**
   * Parses one YAML document.
   *
   * @param file the name used in error messages
   * @throws ConfigException if the text is not YAML, is empty, or repeats a key in a mapping
   */
  public static YamlNode parse(String file, String yaml) throws ConfigException {
    try (JsonParser p = YAML.createParser(yaml)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        throw problem(ConfigLocation.of(file), "the file is empty");
      }
      YamlNode root = read(file, p, t, 1);
      if (p.nextToken() != null) {
        throw at(file, p.currentTokenLocation(), "only one YAML document per file is supported");
      }
      return root;
    } catch (StreamReadException e) {
      throw new ConfigException(ConfigLoader.syntaxProblem(file, e));
    } catch (JsonProcessingException e) {
      JsonLocation l = e.getLocation();
      String what = "not valid YAML: " + e.getOriginalMessage();
      throw l == null ? problem(ConfigLocation.of(file), what) : at(file, l, what);
    } catch (IOException e) {
      throw problem(ConfigLocation.of(file), "cannot be read: " + e.getMessage());
    }
  }

  private static YamlNode read(String file, JsonParser p, JsonToken t, int depth)
      throws IOException, ConfigException {
    JsonLocation at = p.currentTokenLocation();
    if (depth > ConfigLoader.MAX_NESTING && (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)) {
      throw at(file, at, "values are nested more than " + ConfigLoader.MAX_NESTING + " deep");
    }
    if (p instanceof YAMLParser y && y.isCurrentAlias()) {
      // The parser reports an alias as a string holding the anchor's name: "key: *ip" would
      // silently become the key "ip". Aliases are refused, as in the native format.
      throw at(file, at, "YAML aliases (*" + p.getText() + ") are not supported; write the value out");
    }
    switch (t) {
      case START_OBJECT -> {
        Map<String, YamlNode> m = new LinkedHashMap<>();
        Map<String, JsonLocation> kw = new LinkedHashMap<>();
        JsonToken n;
        while ((n = p.nextToken()) != JsonToken.END_OBJECT) {
          String key = p.currentName();
          JsonLocation keyAt = p.currentTokenLocation();
          YamlNode v = read(file, p, p.nextToken(), depth + 1);
          if (m.containsKey(key)) {
            throw at(file, keyAt, "duplicate key '" + key + "'");
          }
          m.put(key, v);
          kw.put(key, keyAt);
        }
        YamlNode node = new YamlNode(Kind.MAP, file, at, Collections.unmodifiableMap(m), null, null, t);
        node.keyWhere = kw;
        return node;
      }
      case START_ARRAY -> {
        List<YamlNode> l = new ArrayList<>();
        JsonToken n;
        while ((n = p.nextToken()) != JsonToken.END_ARRAY) {
          l.add(read(file, p, n, depth + 1));
        }
        return new YamlNode(Kind.LIST, file, at, null, Collections.unmodifiableList(l), null, t);
      }
      case VALUE_NULL -> {
        return new YamlNode(Kind.NULL, file, at, null, null, null, t);
      }
      default -> {
        return new YamlNode(Kind.SCALAR, file, at, null, null, p.getText(), t);
      }
    }
  }

  private static ConfigException at(String file, JsonLocation l, String message) {
    return problem(new ConfigLocation(file, l.getLineNr(), l.getColumnNr()), message);
  }

  private static ConfigException problem(ConfigLocation where, String message) {
    return new ConfigException(ConfigProblem.at(where, message));
  }

  public Kind kind() {
    return kind;
  }

  /** Where this node was written. */
  public ConfigLocation location() {
    return new ConfigLocation(file, line, column);
  }

  /** A problem at this node, for the caller to throw. */
  public ConfigException error(String message) {
    return problem(new ConfigLocation(file, line, column), message);
  }

  /** This node's entries; fails unless it is a mapping. */
  public Map<String, YamlNode> asMap(String what) throws ConfigException {
    if (kind != Kind.MAP) {
      throw error(what + " must be a mapping, was " + describe());
    }
    return map;
  }

  /** This node's elements; fails unless it is a list. */
  public List<YamlNode> asList(String what) throws ConfigException {
    if (kind != Kind.LIST) {
      throw error(what + " must be a list, was " + describe());
    }
    return list;
  }

  /** The text of a scalar (strings, numbers and booleans alike); fails otherwise. */
  public String asText(String what) throws ConfigException {
    if (kind != Kind.SCALAR) {
      throw error(what + " must be a string, was " + describe());
    }
    return text;
  }

  /** A non-negative integer that fits {@code max}. */
  public long asLong(String what, long max) throws ConfigException {
    if (kind != Kind.SCALAR || token != JsonToken.VALUE_NUMBER_INT) {
      throw error(what + " must be an integer, was " + describe());
    }
    long v;
    try {
      v = Long.parseLong(text.replace("_", ""));
    } catch (NumberFormatException e) {
      throw error(what + " must be an integer between 0 and " + max + ", was " + text);
    }
    if (v < 0 || v > max) {
      throw error(what + " must be an integer between 0 and " + max + ", was " + text);
    }
    return v;
  }

  public boolean asBoolean(String what) throws ConfigException {
    if (kind != Kind.SCALAR || (token != JsonToken.VALUE_TRUE && token != JsonToken.VALUE_FALSE)) {
      throw error(what + " must be true or false, was " + describe());
    }
    return token == JsonToken.VALUE_TRUE;
  }

  /** Whether this scalar was written as a number (as opposed to a string). */
  public boolean isNumber() {
    return token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT;
  }

  /** Fails if this mapping has a key outside {@code allowed}, naming the key's position. */
  public void onlyKeys(String what, Set<String> allowed) throws ConfigException {
    for (Map.Entry<String, YamlNode> e : asMap(what).entrySet()) {
      if (!allowed.contains(e.getKey())) {
        String msg = "unknown field '" + e.getKey() + "' in " + what + "; expected one of "
            + String.join(", ", allowed.stream().sorted().toList());
        JsonLocation k = keyWhere.get(e.getKey());
        throw k == null ? error(msg) : at(file, k, msg);
      }
    }
  }

  private String describe() {
    return switch (kind) {
      case MAP -> "a mapping";
      case LIST -> "a list";
      case NULL -> "empty";
      case SCALAR -> token == JsonToken.VALUE_STRING ? "'" + text + "'" : text;
    };
  }
}
