package dev.sluice.internal.policy;

/**
 * Strict parsing of IP address literals, and their canonical text. Only the textual forms of an
 * address are read: never a host name (so never a DNS lookup, which {@code InetAddress.getByName}
 * may do), no zone id ({@code fe80::1%eth0}), no brackets, and none of the legacy IPv4 forms that
 * {@code inet_aton} accepts ({@code 10.1}, {@code 0x0a.0.0.1}, {@code 010.0.0.1}): a client that
 * could spell one address several ways could rotate through keys. Used by typed attributes
 * ({@code dev.sluice.Attribute}) and by access lists ({@link AccessList}).
 */
public final class IpAddresses {
  private IpAddresses() {}

  /**
   * The address as 16 bytes (IPv4 as IPv4-mapped IPv6, {@code ::ffff:a.b.c.d}), or null if
   * {@code text} is not an IPv4 or IPv6 literal.
   */
  public static byte[] parse(String text) {
    if (text.isEmpty() || text.length() > 45) {
      return null;
    }
    if (text.indexOf(':') < 0) {
      long v4 = ipv4(text, 0);
      if (v4 < 0) {
        return null;
      }
      byte[] out = new byte[16];
      out[10] = (byte) 0xff;
      out[11] = (byte) 0xff;
      putIpv4(out, 12, (int) v4);
      return out;
    }
    return ipv6(text);
  }

  /**
   * The dotted quad {@code s[from..]} as its 32 bits (in the low half of the result), or -1 if it
   * is not one.
   */
  public static long ipv4(String s, int from) {
    long bits = 0;
    int i = from;
    int n = s.length();
    for (int part = 0; part < 4; part++) {
      if (part > 0) {
        if (i >= n || s.charAt(i) != '.') {
          return -1;
        }
        i++;
      }
      int start = i;
      int v = 0;
      for (char c; i < n && i - start < 3 && (c = s.charAt(i)) >= '0' && c <= '9'; i++) {
        v = v * 10 + (c - '0');
      }
      int digits = i - start;
      // "010" is octal to inet_aton and decimal to others: neither reading is accepted.
      if (digits == 0 || v > 255 || digits > 1 && s.charAt(start) == '0') {
        return -1;
      }
      bits = bits << 8 | v;
    }
    return i == n ? bits : -1;
  }

  private static void putIpv4(byte[] out, int at, int bits) {
    out[at] = (byte) (bits >>> 24);
    out[at + 1] = (byte) (bits >>> 16);
    out[at + 2] = (byte) (bits >>> 8);
    out[at + 3] = (byte) bits;
  }

  /**
   * The dotted-quad text of IPv4 address {@code bits}, and {@code /prefix} after it unless
   * {@code prefix} is negative: built in one go, as it is on the path of every request by
   * operation with an IP attribute.
   */
  public static String formatIpv4(int bits, int prefix) {
    int a = bits >>> 24;
    int b = bits >>> 16 & 0xff;
    int c = bits >>> 8 & 0xff;
    int d = bits & 0xff;
    return prefix < 0 ? a + "." + b + "." + c + "." + d : a + "." + b + "." + c + "." + d + "/" + prefix;
  }

  /** {@code bits} with all but its first {@code prefix} bits (0 to 32) zeroed. */
  public static int maskIpv4(int bits, int prefix) {
    return prefix == 0 ? 0 : bits & -1 << 32 - prefix;
  }

  private static byte[] ipv6(String s) {
    byte[] out = new byte[16];
    int n = s.length();
    int gap = -1; // the byte index where "::" stands
    int b = 0; // bytes written
    int i = 0;
    if (s.startsWith("::")) {
      gap = 0;
      i = 2;
      if (i == n) {
        return out;
      }
    } else if (s.charAt(0) == ':') {
      return null;
    }
    while (i < n) {
      if (b >= 16) {
        return null;
      }
      int start = i;
      int v = 0;
      while (i < n && i - start < 5 && Character.digit(s.charAt(i), 16) >= 0 && s.charAt(i) < 0x80) {
        v = v * 16 + Character.digit(s.charAt(i), 16);
        i++;
      }
      int digits = i - start;
      if (i < n && s.charAt(i) == '.') {
        // An IPv4 tail takes the last 4 bytes.
        long v4 = b > 12 ? -1 : ipv4(s, start);
        if (v4 < 0) {
          return null;
        }
        putIpv4(out, b, (int) v4);
        b += 4;
        i = n;
        break;
      }
      if (digits == 0 || digits > 4) {
        return null;
      }
      out[b++] = (byte) (v >> 8);
      out[b++] = (byte) v;
      if (i == n) {
        break;
      }
      if (s.charAt(i) != ':') {
        return null;
      }
      i++;
      if (i < n && s.charAt(i) == ':') {
        if (gap >= 0) {
          return null; // "::" twice
        }
        gap = b;
        i++;
        if (i == n) {
          break;
        }
      } else if (i == n) {
        return null; // a trailing single ':'
      }
    }
    if (gap < 0) {
      return b == 16 ? out : null;
    }
    // "::" stands for at least one zero group (RFC 4291 2.2; RFC 5952 4.2.2 says write it so).
    if (b > 14) {
      return null;
    }
    int tail = b - gap;
    System.arraycopy(out, gap, out, 16 - tail, tail);
    java.util.Arrays.fill(out, gap, 16 - tail, (byte) 0);
    return out;
  }

  /** Whether the 16-byte address is IPv4 (IPv4-mapped, {@code ::ffff:0:0/96}). */
  public static boolean isIpv4(byte[] a) {
    for (int i = 0; i < 10; i++) {
      if (a[i] != 0) {
        return false;
      }
    }
    return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
  }

  /** Zeroes the bits after the first {@code prefix} bits of {@code a[from..]}. */
  public static void mask(byte[] a, int from, int prefix) {
    for (int i = from; i < a.length; i++) {
      int bitsHere = prefix - (i - from) * 8;
      if (bitsHere <= 0) {
        a[i] = 0;
      } else if (bitsHere < 8) {
        a[i] = (byte) (a[i] & (0xff << (8 - bitsHere)));
      }
    }
  }

  /**
   * The canonical text of a 16-byte address: dotted decimal for IPv4 (an IPv4-mapped address is
   * IPv4), RFC 5952 for IPv6 (lower case, the longest run of two or more zero groups as
   * {@code ::}, the first of equal runs).
   */
  public static String format(byte[] a) {
    if (isIpv4(a)) {
      return formatIpv4((a[12] & 0xff) << 24 | (a[13] & 0xff) << 16 | (a[14] & 0xff) << 8 | a[15] & 0xff, -1);
    }
    int[] g = new int[8];
    for (int i = 0; i < 8; i++) {
      g[i] = (a[2 * i] & 0xff) << 8 | a[2 * i + 1] & 0xff;
    }
    int bestAt = -1;
    int bestLen = 1;
    for (int i = 0; i < 8; ) {
      if (g[i] != 0) {
        i++;
        continue;
      }
      int j = i;
      while (j < 8 && g[j] == 0) {
        j++;
      }
      if (j - i > bestLen) {
        bestAt = i;
        bestLen = j - i;
      }
      i = j;
    }
    StringBuilder sb = new StringBuilder(39);
    for (int i = 0; i < 8; i++) {
      if (i == bestAt) {
        sb.append("::");
        i += bestLen - 1;
        continue;
      }
      if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
        sb.append(':');
      }
      sb.append(Integer.toHexString(g[i]));
    }
    return sb.toString();
  }
}
