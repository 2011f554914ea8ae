package dev.sluice.config.envoy;

import dev.sluice.config.ConfigLocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One level of an Envoy descriptor tree: the descriptors that may match the next entry of a
 * request's descriptor.
 */
final class EnvoyDescriptors {

  /** A descriptor of this level and what lies below it. */
  static final class Node {
    final String key;
    final String value;
    final EnvoyLimit limit;
    final EnvoyDescriptors children;
    /** {@code share_threshold: true}: the values this wildcard matches share one counter. */
    final boolean shareThreshold;
    /** For a value with {@code *}: its literal parts, split at each {@code *}; else null. */
    final String[] parts;
    /** Where the descriptor is written. */
    final ConfigLocation at;

    Node(String key, String value, EnvoyLimit limit, EnvoyDescriptors children, boolean shareThreshold,
        ConfigLocation at) {
      this.key = key;
      this.value = value;
      this.limit = limit;
      this.children = children;
      this.shareThreshold = shareThreshold;
      this.parts = value != null && value.indexOf('*') >= 0 ? value.split("\\*", -1) : null;
      this.at = at;
    }
  }

  /**
   * What a request descriptor matched: its limit, and per entry the wildcard value that stands
   * for the entry's value in the counter's key (share_threshold), or null where the value is
   * its own.
   */
  record Match(EnvoyLimit limit, String[] sharedValues) {}

  private record KeyValue(String key, String value) {}

  private final Map<KeyValue, Node> exact = new HashMap<>();
  private final List<Node> wildcards = new ArrayList<>();
  private final Map<String, Node> anyValue = new HashMap<>();

  /** Adds a node; false if this level already has a descriptor with the same key and value. */
  boolean add(Node n) {
    if (n.value == null) {
      return anyValue.putIfAbsent(n.key, n) == null;
    }
    if (exact.putIfAbsent(new KeyValue(n.key, n.value), n) != null) {
      return false;
    }
    if (n.parts != null) {
      wildcards.add(n);
    }
    return true;
  }

  /**
   * Adds the nodes of {@code other} (wildcards after this level's own, in their order), as
   * Envoy's service merges the files of one domain; the first node whose key and value this level
   * already has, or null if none.
   */
  Node addAll(EnvoyDescriptors other) {
    List<Node> nodes = new ArrayList<>();
    for (Node n : other.exact.values()) {
      if (n.parts == null) {
        nodes.add(n);
      }
    }
    nodes.addAll(other.wildcards);
    nodes.addAll(other.anyValue.values());
    for (Node n : nodes) {
      if (!add(n)) {
        return n;
      }
    }
    return null;
  }

  boolean isEmpty() {
    return exact.isEmpty() && anyValue.isEmpty();
  }

  /**
   * The limit for a request descriptor, following Envoy's lookup: at each level an exact
   * {@code key: value} wins, then the first wildcard value in file order that matches (each
   * {@code *} standing for any text, the empty text too: {@code foo*}, {@code bar*b},
   * {@code foo*bar*baz}), then a descriptor with the key alone; a limit applies only to a
   * request descriptor that ends exactly at its depth. Null if no limit applies.
   */
  Match match(List<EnvoyEntry> entries) {
    EnvoyDescriptors level = this;
    EnvoyLimit found = null;
    String[] shared = null;
    for (int i = 0; i < entries.size(); i++) {
      EnvoyEntry e = entries.get(i);
      Node next = level.exact.get(new KeyValue(e.key(), e.value()));
      if (next == null) {
        for (Node w : level.wildcards) {
          if (w.key.equals(e.key()) && matches(w.parts, e.value())) {
            next = w;
            break;
          }
        }
        if (next != null && next.shareThreshold) {
          if (shared == null) {
            shared = new String[entries.size()];
          }
          shared[i] = next.value;
        }
      }
      if (next == null) {
        next = level.anyValue.get(e.key());
      }
      if (next == null) {
        break;
      }
      if (next.limit != null && i == entries.size() - 1) {
        found = next.limit;
      }
      if (next.children.isEmpty()) {
        break;
      }
      level = next.children;
    }
    return found == null ? null : new Match(found, shared);
  }

  /**
   * Whether some request descriptor with these entry keys could match a limit at its depth:
   * {@code values} has per entry the value when it is known ahead (a constant), or null when
   * each request brings its own, which any descriptor of the key may then match.
   */
  boolean mayMatch(List<String> keys, List<String> values) {
    List<Node> candidates = new ArrayList<>();
    List<EnvoyDescriptors> levels = List.of(this);
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      String value = values.get(i);
      candidates = new ArrayList<>();
      for (EnvoyDescriptors level : levels) {
        for (Node n : level.nodes()) {
          if (n.key.equals(key) && (value == null || n.value == null || n.value.equals(value)
              || n.parts != null && matches(n.parts, value))) {
            candidates.add(n);
          }
        }
      }
      List<EnvoyDescriptors> next = new ArrayList<>();
      for (Node n : candidates) {
        next.add(n.children);
      }
      levels = next;
    }
    return candidates.stream().anyMatch(n -> n.limit != null);
  }

  /** The paths of the descriptors at this level and below that have a limit, in no set order. */
  void limitedPaths(List<String> out) {
    for (Node n : nodes()) {
      if (n.limit != null) {
        out.add(n.limit.path());
      }
      n.children.limitedPaths(out);
    }
  }

  private List<Node> nodes() {
    List<Node> all = new ArrayList<>(exact.values());
    all.addAll(anyValue.values());
    return all;
  }

  /**
   * Whether {@code value} is the parts of a wildcard pattern with any text (or none) between
   * them: it starts with the first, ends with the last, and holds the others in order, without
   * overlaps.
   */
  static boolean matches(String[] parts, String value) {
    String first = parts[0];
    String last = parts[parts.length - 1];
    if (value.length() < first.length() + last.length() || !value.startsWith(first) || !value.endsWith(last)) {
      return false;
    }
    int from = first.length();
    int end = value.length() - last.length();
    for (int p = 1; p < parts.length - 1; p++) {
      String part = parts[p];
      int at = value.indexOf(part, from);
      if (at < 0 || at + part.length() > end) {
        return false;
      }
      from = at + part.length();
    }
    return true;
  }
}
