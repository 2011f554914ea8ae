package dev.sluice.config;

import com.fasterxml.jackson.core.JsonToken;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A YAML node that remembers where it was written, so every error can say so. */
abstract class Node {
  final ConfigLocation at;

  Node(ConfigLocation at) {
    this.at = at;
  }

  /** How the node reads in an error message: "a list", "the string \"20\"", "the number 5.5". */
  abstract String describe();

  /** A mapping; keys in the order written. */
  static final class MapNode extends Node {
    final Map<String, Field> fields = new LinkedHashMap<>();

    MapNode(ConfigLocation at) {
      super(at);
    }

    Field field(String name) {
      return fields.get(name);
    }

    @Override
    String describe() {
      return "a mapping";
    }
  }

  /** A key of a mapping, where it was written, and its value. */
  record Field(String name, ConfigLocation at, Node value) {}

  static final class ListNode extends Node {
    final List<Node> items;

    ListNode(ConfigLocation at, List<Node> items) {
      super(at);
      this.items = items;
    }

    @Override
    String describe() {
      return "a list";
    }
  }

  /**
   * A scalar as YAML typed it: a string, a number (with its exact decimal value, or null if YAML
   * called it a number that is not finite, such as {@code .inf}), a boolean or null.
   */
  static final class ScalarNode extends Node {
    final JsonToken token;
    final String text;
    final BigDecimal number;

    ScalarNode(ConfigLocation at, JsonToken token, String text, BigDecimal number) {
      super(at);
      this.token = token;
      this.text = text;
      this.number = number;
    }

    boolean isString() {
      return token == JsonToken.VALUE_STRING;
    }

    boolean isNumber() {
      return token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT;
    }

    boolean isBoolean() {
      return token == JsonToken.VALUE_TRUE || token == JsonToken.VALUE_FALSE;
    }

    boolean isNull() {
      return token == JsonToken.VALUE_NULL;
    }

    @Override
    String describe() {
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
