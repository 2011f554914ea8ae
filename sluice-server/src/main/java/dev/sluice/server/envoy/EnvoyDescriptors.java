package dev.sluice.server.envoy;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
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

    Node(String key, String value, EnvoyLimit limit, EnvoyDescriptors children) {
      this.key = key;
      this.value = value;
      this.limit = limit;
      this.children = children;
    }
  }

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
    if (n.value.endsWith("*")) {
      wildcards.add(n);
    }
    return true;
  }

  boolean isEmpty() {
    return exact.isEmpty() && anyValue.isEmpty();
  }

  /**
   * The limit for a request descriptor, following Envoy's lookup: at each level an exact
   * {@code key: value} wins, then the first wildcard value ({@code foo*}) in file order whose
   * prefix matches, then a descriptor with the key alone; a limit applies only to a request
   * descriptor that ends exactly at its depth.
   */
  EnvoyLimit match(List<RateLimitDescriptor.Entry> entries) {
    EnvoyDescriptors level = this;
    EnvoyLimit found = null;
    for (int i = 0; i < entries.size(); i++) {
      RateLimitDescriptor.Entry e = entries.get(i);
      Node next = level.exact.get(new KeyValue(e.getKey(), e.getValue()));
      if (next == null) {
        for (Node w : level.wildcards) {
          if (w.key.equals(e.getKey()) && e.getValue().startsWith(w.value.substring(0, w.value.length() - 1))) {
            next = w;
            break;
          }
        }
      }
      if (next == null) {
        next = level.anyValue.get(e.getKey());
      }
      if (next == null) {
        return null;
      }
      if (next.limit != null && i == entries.size() - 1) {
        found = next.limit;
      }
      if (next.children.isEmpty()) {
        break;
      }
      level = next.children;
    }
    return found;
  }
}
