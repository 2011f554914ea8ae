package dev.sluice.config.yaml;

import com.fasterxml.jackson.core.JsonToken;
import dev.sluice.config.ConfigLocation;
import java.math.BigDecimal;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A YAML node that remembers where it was written, so every error can say so: a
 * {@link MapNode}, a {@link ListNode} or a {@link ScalarNode}, as {@link YamlTree#read} returns
 * them. The native reader walks these; so do readers of other formats (the service's Envoy files),
 * which then name {@code file:line:column} the same way.
 */
public abstract sealed class Node permits Node.MapNode, Node.ListNode, Node.ScalarNode {
  final ConfigLocation at;

  Node(ConfigLocation at) {
    this.at = at;
  }

  /** Where the node was written: its first character. */
  public ConfigLocation location() {
    return at;
  }

  /** How the node reads in an error message: "a list", "the string \"20\"", "the number 5.5". */
  public abstract String describe();

  /** A mapping; keys in the order written, none twice. */
  public static final class MapNode extends Node {
    final Map<String, Field> fields = new LinkedHashMap<>();

    MapNode(ConfigLocation at) {
      super(at);
    }

    /** The field named {@code name}, or null. */
    public Field field(String name) {
      return fields.get(name);
    }

    /** The fields by name, in the order written. */
    public Map<String, Field> fields() {
      return Collections.unmodifiableMap(fields);
    }

    @Override
    public String describe() {
      return "a mapping";
    }
  }

  /** A key of a mapping, where the key was written, and its value. */
  public record Field(String name, ConfigLocation at, Node value) {}

  /** A list. */
  public static final class ListNode extends Node {
    final List<Node> items;

    ListNode(ConfigLocation at, List<Node> items) {
      super(at);
      this.items = items;
    }

    public List<Node> items() {
      return Collections.unmodifiableList(items);
    }

    @Override
    public String describe() {
      return "a list";
    }
  }

  /**
   * A scalar as YAML typed it: a string, a number (with its exact decimal value, or null if YAML
   * called it a number that is not finite, such as {@code .inf}), a boolean or null.
   */
  public static final class ScalarNode extends Node {
    final JsonToken token;
    final String text;
    final BigDecimal number;

    ScalarNode(ConfigLocation at, JsonToken token, String text, BigDecimal number) {
      super(at);
      this.token = token;
      this.text = text;
      this.number = number;
    }

    /** The scalar as written (without quotes); empty for null. */
    public String text() {
      return text;
    }

    /** The exact value of a number; null for other scalars and for numbers that are not finite. */
    public BigDecimal number() {
      return number;
    }

    public boolean isString() {
      return token == JsonToken.VALUE_STRING;
    }

    /** Whether YAML typed it as a number, whole or not. */
    public boolean isNumber() {
      return token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT;
    }

    /** Whether YAML typed it as a whole number. */
    public boolean isInteger() {
      return token == JsonToken.VALUE_NUMBER_INT;
    }

    public boolean isBoolean() {
      return token == JsonToken.VALUE_TRUE || token == JsonToken.VALUE_FALSE;
    }

    /** Whether it is the boolean true. */
    public boolean isTrue() {
      return token == JsonToken.VALUE_TRUE;
    }

    /** Whether it is YAML's null: {@code ~}, {@code null}, or nothing at all after a key. */
    public boolean isNull() {
      return token == JsonToken.VALUE_NULL;
    }

    @Override
    public String describe() {
      if (isString()) {
        return "the string \"" + text + "\"";
      }
      if (isNumber()) {
        return "the number " + text;
      }
      if (isBoolean()) {
        return "the boolean " + text;
      }
      return "empty";
    }
  }
}
