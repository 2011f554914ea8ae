package dev.sluice.spring.web;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** An address range, {@code 10.0.0.0/8} or {@code 2001:db8::/32}; a bare address is one address. */
record Cidr(byte[] network, int prefix) {

  /**
   * Parses {@code text}.
   *
   * @throws IllegalArgumentException naming the text if it is not an address or range
   */
  static Cidr parse(String text) {
    String t = text.trim();
    int slash = t.indexOf('/');
    byte[] a = address(slash < 0 ? t : t.substring(0, slash));
    if (a == null) {
      throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR range");
    }
    int bits = a.length * 8;
    int prefix = bits;
    if (slash >= 0) {
      try {
        prefix = Integer.parseInt(t.substring(slash + 1));
      } catch (NumberFormatException e) {
        prefix = -1;
      }
      if (prefix < 0 || prefix > bits) {
        throw new IllegalArgumentException("'" + text + "': the prefix length must be between 0 and " + bits);
      }
    }
    return new Cidr(a, prefix);
  }

  boolean contains(byte[] address) {
    if (address == null || address.length != network.length) {
      return false;
    }
    int full = prefix / 8;
    for (int i = 0; i < full; i++) {
      if (address[i] != network[i]) {
        return false;
      }
    }
    int rest = prefix % 8;
    if (rest == 0) {
      return true;
    }
    int mask = (0xff << (8 - rest)) & 0xff;
    return (address[full] & mask) == (network[full] & mask);
  }

  /**
   * The bytes of an IP address literal (4 for IPv4 and IPv4-mapped IPv6, 16 for IPv6), or null
   * if {@code text} is not one. Never a name lookup: a forwarded header is the client's to write.
   */
  static byte[] address(String text) {
    if (text == null || text.isEmpty() || text.length() > 64) {
      return null;
    }
    if (text.indexOf(':') < 0) {
      return ipv4(text);
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (!(c == ':' || c == '.' || Character.digit(c, 16) >= 0)) {
        return null;
      }
    }
    try {
      // Only hex digits, colons and dots: a literal, which getByName parses without a lookup.
      return InetAddress.getByName(text).getAddress();
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static byte[] ipv4(String text) {
    String[] parts = text.split("\\.", -1);
    if (parts.length != 4) {
      return null;
    }
    byte[] b = new byte[4];
    for (int i = 0; i < 4; i++) {
      String p = parts[i];
      if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit)) {
        return null;
      }
      int v = Integer.parseInt(p);
      if (v > 255) {
        return null;
      }
      b[i] = (byte) v;
    }
    return b;
  }
}
