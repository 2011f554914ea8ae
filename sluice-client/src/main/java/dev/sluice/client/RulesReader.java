package dev.sluice.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Algorithm;
import dev.sluice.Attribute;
import dev.sluice.FailureMode;
import dev.sluice.KeyOverride;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The rules in force on a service, read from {@code GET /v1/rules}, as the client's limiter needs
 * them: each rule's windows, overrides, algorithm, shadow flag and failure mode (the client
 * resolves keys to their windows, keeps denials and applies failure modes itself), and the
 * operations with their typed attributes (the client turns an operation request into items).
 *
 * <p>What only the service acts on is left out: a rule's ban, audit and lease policies and its
 * access lists are enforced by the service on every request it decides, and the client's rules
 * carry none of them (a limiter on a store that keeps no policies refuses such rules). Named tiers
 * and live limits are the service's too: the windows an answer reports are the service's.
 */
final class RulesReader {
  private static final ObjectMapper JSON = new ObjectMapper();

  private RulesReader() {}

  /** The generation and rules of an answer to {@code GET /v1/rules}. */
  record Snapshot(long generation, RuleSet rules) {}

  static Snapshot read(byte[] body) throws IOException {
    JsonNode root = JSON.readTree(body);
    if (root == null || !root.isObject() || !root.path("rules").isArray()) {
      throw new IOException("not an answer of GET /v1/rules");
    }
    List<Rule> rules = new ArrayList<>();
    for (JsonNode r : root.get("rules")) {
      rules.add(rule(r));
    }
    List<Operation> operations = new ArrayList<>();
    for (JsonNode op : root.path("operations")) {
      List<OperationItem> items = new ArrayList<>();
      for (JsonNode it : op.path("items")) {
        items.add(new OperationItem(text(it, "rule"), text(it, "key"), optional(it, "when"), optional(it, "unless"),
            it.path("cost").asLong(1)));
      }
      operations.add(new Operation(text(op, "name"), items));
    }
    List<Attribute> attributes = new ArrayList<>();
    for (JsonNode a : root.path("attributes")) {
      String name = text(a, "name");
      if ("ip".equals(optional(a, "type"))) {
        attributes.add(Attribute.ip(name, prefix(a, "group"), prefix(a, "group6")));
      } else {
        attributes.add(Attribute.string(name));
      }
    }
    RuleSet set = RuleSet.of(rules);
    if (!operations.isEmpty() || !attributes.isEmpty()) {
      set = set.withOperations(operations, attributes);
    }
    return new Snapshot(root.path("generation").asLong(), set);
  }

  private static Rule rule(JsonNode r) throws IOException {
    Rule.Builder b = Rule.builder(text(r, "name"))
        .algorithm(Algorithm.fromConfigName(text(r, "algorithm")))
        .windows(windows(r))
        .shadow(r.path("shadow").asBoolean(false))
        .failureMode(FailureMode.fromConfigName(r.path("failureMode").asText("open")));
    if (r.has("maxWaitMs")) {
      b.maxWait(Duration.ofMillis(r.get("maxWaitMs").asLong()));
    }
    for (JsonNode o : r.path("overrides")) {
      List<String> keys = new ArrayList<>();
      for (JsonNode k : o.path("keys")) {
        keys.add(k.asText());
      }
      b.override(new KeyOverride(keys, windows(o)));
    }
    return b.build();
  }

  private static List<Window> windows(JsonNode n) throws IOException {
    List<Window> out = new ArrayList<>();
    for (JsonNode w : n.path("windows")) {
      out.add(Window.perMillis(w.path("limit").asLong(), w.path("periodMs").asLong()));
    }
    if (out.isEmpty()) {
      throw new IOException("a rule without windows");
    }
    return out;
  }

  private static int prefix(JsonNode a, String field) {
    String g = optional(a, field);
    return g == null ? Attribute.NO_GROUPING : Integer.parseInt(g.substring(1));
  }

  private static String text(JsonNode n, String field) throws IOException {
    JsonNode v = n.get(field);
    if (v == null || !v.isTextual()) {
      throw new IOException("'" + field + "' missing");
    }
    return v.textValue();
  }

  private static String optional(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || !v.isTextual() ? null : v.textValue();
  }
}
