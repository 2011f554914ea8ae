package dev.sluice.config;

import dev.sluice.Attribute;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.config.yaml.Node;
import dev.sluice.config.yaml.Node.Field;
import dev.sluice.config.yaml.Node.ListNode;
import dev.sluice.config.yaml.Node.MapNode;
import dev.sluice.config.yaml.Node.ScalarNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A file's {@code operations} and the typed {@code attributes} their key templates read. */
final class OperationReader extends FieldReader {
  private static final List<String> OPERATION_FIELDS = List.of("name", "items");
  private static final List<String> ITEM_FIELDS = List.of("rule", "key", "when", "unless", "cost");
  private static final List<String> ATTRIBUTE_FIELDS = List.of("type", "group", "group6");

  final List<Operation> operations = new ArrayList<>();
  final List<Attribute> attributes = new ArrayList<>();
  final Map<String, List<ConfigLocation>> operationOrigins = new LinkedHashMap<>();
  final Map<String, ConfigLocation> attributeOrigins = new LinkedHashMap<>();

  OperationReader(Problems problems) {
    super(problems);
  }

  /** {@code operations: [{name, items: [{rule, key, when, unless, cost}, ...]}, ...]}. */
  void readOperations(Field f) {
    if (!(f.value() instanceof ListNode list)) {
      error(f.value().location(), "'" + NativeReader.OPERATIONS_KEY + "' must be a list of operations, each with name and items, found "
          + f.value().describe());
      return;
    }
    Map<String, ConfigLocation> names = new LinkedHashMap<>();
    for (int i = 0; i < list.items().size(); i++) {
      readOperation(list.items().get(i), i + 1, names);
    }
  }

  private void readOperation(Node n, int index, Map<String, ConfigLocation> names) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "operation " + index + " must be a mapping with 'name' and 'items', found " + n.describe());
      return;
    }
    int errorsBefore = errorCount();
    checkFields(m, OPERATION_FIELDS);
    String name = null;
    ConfigLocation nameAt = m.location();
    String label = "operation " + index;
    Field nf = m.field("name");
    if (nf == null) {
      missing(m, "name", OPERATION_FIELDS, "operation " + index + " has no 'name'");
    } else {
      nameAt = nf.value().location();
      name = string(nf, "name");
      if (name != null) {
        label = "operation '" + name + "'";
        ConfigLocation first = names.putIfAbsent(name, nameAt);
        if (first != null) {
          error(nameAt, "duplicate operation name '" + name + "' (first defined at line " + first.line() + ", column "
              + first.column() + ")");
        }
      }
    }
    List<OperationItem> items = new ArrayList<>();
    List<ConfigLocation> at = new ArrayList<>();
    at.add(nameAt);
    Field itf = m.field("items");
    if (itf == null) {
      missing(m, "items", OPERATION_FIELDS, label + " has no 'items' (its list of {rule, key})");
    } else if (!(itf.value() instanceof ListNode list)) {
      error(itf.value().location(), "'items' must be a list of {rule, key, when, unless, cost}, found " + itf.value().describe());
    } else if (list.items().isEmpty()) {
      error(list.location(), label + " has no items; an operation needs at least one");
    } else if (list.items().size() > Operation.MAX_ITEMS) {
      error(list.location(), label + " has " + list.items().size() + " items; the maximum is " + Operation.MAX_ITEMS);
    } else {
      for (Node item : list.items()) {
        OperationItem it = readOperationItem(item, label, at);
        if (it != null) {
          items.add(it);
        }
      }
    }
    if (errorCount() > errorsBefore) {
      return;
    }
    Operation op;
    try {
      op = new Operation(name, items);
    } catch (IllegalArgumentException e) {
      error(nameAt, e.getMessage());
      return;
    }
    operations.add(op);
    operationOrigins.put(name, at);
  }

  private OperationItem readOperationItem(Node n, String label, List<ConfigLocation> at) {
    if (!(n instanceof MapNode m)) {
      error(n.location(), "an item of " + label + " must be a mapping such as {rule: per_user, key: \"user:{user}\"}, found "
          + n.describe());
      return null;
    }
    int errorsBefore = errorCount();
    checkFields(m, ITEM_FIELDS);
    String rule = null;
    ConfigLocation ruleAt = m.location();
    Field rf = m.field("rule");
    if (rf == null) {
      missing(m, "rule", ITEM_FIELDS, "an item of " + label + " has no 'rule'");
    } else {
      ruleAt = rf.value().location();
      rule = string(rf, "rule");
    }
    String key = null;
    Field kf = m.field("key");
    if (kf == null) {
      missing(m, "key", ITEM_FIELDS, "an item of " + label + " has no 'key' (a template such as \"user:{user}\")");
    } else {
      key = string(kf, "key");
      if (key != null) {
        try {
          OperationItem.of("r", key);
        } catch (IllegalArgumentException e) {
          error(kf.value().location(), e.getMessage());
        }
      }
    }
    String when = attributeName(m.field("when"));
    String unless = attributeName(m.field("unless"));
    if (when != null && when.equals(unless)) {
      error(m.field("unless").value().location(), "when and unless both name attribute '" + when
          + "': the item could never apply");
    }
    long cost = 1;
    Field cf = m.field("cost");
    if (cf != null) {
      if (!(cf.value() instanceof ScalarNode s) || !s.isInteger()) {
        error(cf.value().location(), "cost must be a whole number ≥ 0, found " + cf.value().describe());
      } else if (decimal(s, "cost")) {
        if (s.number().signum() < 0 || s.number().compareTo(BigDecimal.valueOf(MAX_LIMIT)) > 0) {
          error(cf.value().location(), "cost must be from 0 to " + MAX_LIMIT + ", found " + s.text());
        } else {
          cost = s.number().longValueExact();
        }
      }
    }
    if (errorCount() > errorsBefore) {
      return null;
    }
    at.add(ruleAt);
    return new OperationItem(rule, key, when, unless, cost);
  }

  /** The attribute named by a {@code when} or {@code unless}, or null if absent or bad (recorded). */
  private String attributeName(Field f) {
    if (f == null) {
      return null;
    }
    String name = string(f, f.name());
    if (name == null) {
      return null;
    }
    try {
      return Attribute.string(name).name();
    } catch (IllegalArgumentException e) {
      error(f.value().location(), f.name() + ": " + e.getMessage());
      return null;
    }
  }

  /** {@code attributes: {ip: {type: ip, group: /24, group6: /64}, ...}}. */
  void readAttributes(Field f) {
    if (!(f.value() instanceof MapNode m)) {
      error(f.value().location(), "'" + NativeReader.ATTRIBUTES_KEY + "' must be a mapping of attribute names to {type, group, group6}, "
          + "found " + f.value().describe());
      return;
    }
    for (Field a : m.fields().values()) {
      if (!(a.value() instanceof MapNode spec)) {
        error(a.value().location(), "attribute '" + a.name() + "' must be a mapping such as {type: ip, group: /24}, found "
            + a.value().describe());
        continue;
      }
      int errorsBefore = errorCount();
      checkFields(spec, ATTRIBUTE_FIELDS);
      try {
        Attribute.string(a.name());
      } catch (IllegalArgumentException e) {
        error(a.at(), e.getMessage());
      }
      Attribute.Type type = null;
      Field tf = spec.field("type");
      if (tf == null) {
        missing(spec, "type", ATTRIBUTE_FIELDS, "attribute '" + a.name() + "' has no 'type' (ip or string)");
      } else {
        String text = string(tf, "type");
        type = text == null ? null : parseEnum(tf, text, Attribute.Type.values(), Attribute.Type::configName);
      }
      int v4 = prefix(spec.field("group"), type, 32);
      int v6 = prefix(spec.field("group6"), type, 128);
      if (errorCount() > errorsBefore || type == null) {
        continue;
      }
      attributes.add(type == Attribute.Type.IP ? Attribute.ip(a.name(), v4, v6) : Attribute.string(a.name()));
      attributeOrigins.put(a.name(), a.at());
    }
  }

  /** A grouping prefix ({@code /24} or {@code 24}) from 0 to {@code max}, or NO_GROUPING if absent or bad. */
  private int prefix(Field f, Attribute.Type type, int max) {
    if (f == null) {
      return Attribute.NO_GROUPING;
    }
    if (type != null && type != Attribute.Type.IP) {
      error(f.at(), f.name() + " applies only to attributes of type ip");
      return Attribute.NO_GROUPING;
    }
    String family = max == 32 ? "IPv4" : "IPv6";
    String text = f.value() instanceof ScalarNode s && (s.isString() || s.isInteger())
        ? s.text() : null;
    String digits = text == null ? null : text.startsWith("/") ? text.substring(1) : text;
    if (digits == null || !digits.matches("0|[1-9][0-9]{0,2}") || Integer.parseInt(digits) > max) {
      error(f.value().location(), f.name() + " must be an " + family + " prefix length from /0 to /" + max + " (such as /"
          + (max == 32 ? 24 : 64) + "), found " + (text != null ? text : f.value().describe()));
      return Attribute.NO_GROUPING;
    }
    return Integer.parseInt(digits);
  }
}
