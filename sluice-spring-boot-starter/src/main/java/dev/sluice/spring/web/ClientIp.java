package dev.sluice.spring.web;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The client's address behind trusted proxies. The peer of the connection is the client unless
 * it is a trusted proxy; then the forwarded hops are read from the right (the nearest proxy's
 * entry last), and the first address that is not a trusted proxy is the client. {@code Forwarded}
 * (RFC 7239, its {@code for=} parameters) is read when present, else {@code X-Forwarded-For}.
 * What an untrusted peer forwards is ignored: anyone can write those headers. A hop that is not
 * an address ({@code unknown}, an obfuscated name) ends the walk at the proxy that wrote it.
 */
final class ClientIp {
  private final List<Cidr> trusted;

  ClientIp(List<Cidr> trusted) {
    this.trusted = List.copyOf(trusted);
  }

  /** Parses {@code sluice.web.trusted-proxies}, naming the entry at fault. */
  static ClientIp of(List<String> proxies) {
    List<Cidr> ranges = new ArrayList<>();
    for (int i = 0; i < proxies.size(); i++) {
      try {
        ranges.add(Cidr.parse(proxies.get(i)));
      } catch (IllegalArgumentException e) {
        throw new dev.sluice.spring.SluiceConfigurationException("sluice.web.trusted-proxies[" + i + "]: "
            + e.getMessage(), "Give each trusted proxy as an IP address or a CIDR range, e.g. 10.0.0.0/8.");
      }
    }
    return new ClientIp(ranges);
  }

  boolean isTrusted(byte[] address) {
    for (Cidr c : trusted) {
      if (c.contains(address)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The client address of a request from {@code peer} with these header values (each list holds
   * every line of its field, in order; null or empty when absent).
   */
  String resolve(String peer, List<String> forwarded, List<String> xForwardedFor) {
    byte[] current = Cidr.address(strip(peer));
    String client = canonical(peer, current);
    if (trusted.isEmpty() || current == null || !isTrusted(current)) {
      return client;
    }
    List<String> hops = forwarded != null && !forwarded.isEmpty() ? forwardedFor(forwarded) : split(xForwardedFor);
    for (int i = hops.size() - 1; i >= 0 && isTrusted(current); i--) {
      String hop = strip(hops.get(i));
      byte[] a = Cidr.address(hop);
      if (a == null) {
        break;
      }
      current = a;
      client = canonical(hop, a);
    }
    return client;
  }

  private static String canonical(String text, byte[] a) {
    if (a == null) {
      return text;
    }
    try {
      return InetAddress.getByAddress(a).getHostAddress();
    } catch (java.net.UnknownHostException e) {
      return text;
    }
  }

  private static List<String> split(List<String> lines) {
    List<String> hops = new ArrayList<>();
    if (lines != null) {
      for (String line : lines) {
        for (String h : line.split(",")) {
          if (!h.isBlank()) {
            hops.add(h.trim());
          }
        }
      }
    }
    return hops;
  }

  /** The {@code for=} value of each element of {@code Forwarded}; an element without one is "unknown". */
  private static List<String> forwardedFor(List<String> lines) {
    List<String> hops = new ArrayList<>();
    for (String element : split(lines)) {
      String value = "unknown";
      for (String pair : element.split(";")) {
        String p = pair.trim();
        if (p.length() > 4 && p.regionMatches(true, 0, "for=", 0, 4)) {
          value = p.substring(4).trim();
        }
      }
      hops.add(value);
    }
    return hops;
  }

  /** An address without quotes, brackets and port: {@code "[2001:db8::1]:4711"}, {@code 192.0.2.1:80}. */
  static String strip(String hop) {
    if (hop == null) {
      return null;
    }
    String h = hop.trim();
    if (h.length() >= 2 && h.startsWith("\"") && h.endsWith("\"")) {
      h = h.substring(1, h.length() - 1);
    }
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end < 0 ? h : h.substring(1, end);
    }
    int colon = h.indexOf(':');
    if (colon >= 0 && colon == h.lastIndexOf(':')) {
      return h.substring(0, colon); // IPv4 with a port; IPv6 has more than one colon
    }
    return h;
  }
}
